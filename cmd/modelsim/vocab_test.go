package main

import (
	"slices"
	"testing"

	"github.com/kvpick/kvpick/pkg/tokenize"
)

func TestVocabRoundTrips(t *testing.T) {
	v := newVocab()
	if len(v.ids) < 1000 {
		t.Fatalf("vocab has only %d words", len(v.ids))
	}
	var text []byte
	ids := v.ids[:200]
	for _, id := range ids {
		text = v.appendText(text, id)
	}
	if got := tokenize.Approx(nil, string(text)); !slices.Equal(got, ids) {
		t.Fatalf("Approx(text) does not give back the generated ids")
	}
}

package envoyclient

import (
	"bytes"
	"testing"
)

func TestSplit(t *testing.T) {
	body := []byte("0123456789")
	tests := []struct {
		name  string
		body  []byte
		plan  []int
		sizes []int
	}{
		{"one chunk", body, nil, []int{10}},
		{"cycled plan", body, []int{3, 1}, []int{3, 1, 3, 1, 2}},
		{"plan larger than body", body, []int{64}, []int{10}},
		{"non-positive size = rest", body, []int{4, 0}, []int{4, 6}},
		{"empty body", []byte{}, []int{3}, []int{0}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cs := split(tc.body, tc.plan)
			var joined []byte
			if len(cs) != len(tc.sizes) {
				t.Fatalf("%d chunks, want %d", len(cs), len(tc.sizes))
			}
			for i, c := range cs {
				if len(c.data) != tc.sizes[i] || c.last != (i == len(cs)-1) {
					t.Fatalf("chunk %d: %d bytes last=%v", i, len(c.data), c.last)
				}
				joined = append(joined, c.data...)
			}
			if !bytes.Equal(joined, tc.body) {
				t.Fatalf("joined %q", joined)
			}
		})
	}
}

func TestDecisionResultInvariants(t *testing.T) {
	if _, err := decisionResult(nil, nil); err == nil {
		t.Fatal("a decision without a destination passed")
	}
}

package tokenize

import (
	"context"
	"slices"
	"testing"
)

func TestBytes(t *testing.T) {
	tests := []struct {
		text string
		want []uint32
	}{
		{"", nil},
		{"a", []uint32{'a'}},
		{"abcd", []uint32{0x64636261}},
		{"abcde", []uint32{0x64636261, 'e'}},
		{"日本", []uint32{0xe6a597e6, 0xac9c}}, // e6 97 a5 e6 | 9c ac, little-endian
	}
	for _, tc := range tests {
		got, err := Bytes{}.Tokenize(context.Background(), "m", []byte(tc.text), []uint32{7})
		if err != nil || !slices.Equal(got[1:], tc.want) || got[0] != 7 {
			t.Errorf("Tokenize(%q) = %x, %v; want 7 then %x", tc.text, got, err, tc.want)
		}
	}
	// The prefix property the index relies on: equal leading bytes, equal leading tokens.
	a, _ := Bytes{}.Tokenize(context.Background(), "", []byte("shared prefix of 32 bytes......!tail one"), nil)
	b, _ := Bytes{}.Tokenize(context.Background(), "", []byte("shared prefix of 32 bytes......!other tail"), nil)
	if !slices.Equal(a[:8], b[:8]) || slices.Equal(a[8:9], b[8:9]) {
		t.Fatalf("prefix tokens differ or tails collide: %x / %x", a, b)
	}
	if _, ok := Local("remote"); ok {
		t.Fatal("Local(remote) must not build a tokenizer")
	}
	for _, name := range []string{"bytes", "approximate"} {
		if tk, ok := Local(name); !ok || tk.Name() != name {
			t.Fatalf("Local(%q) = %v, %v", name, tk, ok)
		}
	}
}

func BenchmarkBytes32KB(b *testing.B) {
	text := sampleText(32 << 10)
	dst := make([]uint32, 0, 16384)
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		dst = BytesOf(dst[:0], text)
	}
}

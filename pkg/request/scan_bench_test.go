package request

import "testing"

// BenchmarkAppendString220KB measures string decoding alone, into a reused
// buffer (no allocation), to separate scanning cost from the prompt's
// allocation in BenchmarkParse220KB.
func BenchmarkAppendString220KB(b *testing.B) {
	body := mustJSON(longText(220 << 10))
	dst := make([]byte, 0, len(body))
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		s := scanner{b: body}
		var err error
		if dst, err = s.appendString(dst[:0]); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSkipString220KB measures validation-only scanning.
func BenchmarkSkipString220KB(b *testing.B) {
	body := mustJSON(longText(220 << 10))
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		s := scanner{b: body}
		if err := s.skipString(); err != nil {
			b.Fatal(err)
		}
	}
}

package request

import (
	"strings"
	"testing"
)

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

// base64Text returns n bytes of base64-like text: what a skipped inline
// image ("data:image/png;base64,...") looks like, with no escapes.
func base64Text(n int) string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[(i*7919)%len(alphabet)]
	}
	return string(b)
}

// BenchmarkSkipBase64220KB measures validating a long escape-free string.
func BenchmarkSkipBase64220KB(b *testing.B) {
	body := []byte(`"` + base64Text(220<<10) + `"`)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		s := scanner{b: body}
		if err := s.skipString(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAppendStringShapes decodes 220 KB strings of different texture:
// how often an escape or a non-ASCII rune interrupts a plain run decides
// the speed.
func BenchmarkAppendStringShapes(b *testing.B) {
	prose := longText(220 << 10)
	shapes := []struct{ name, text string }{
		{"prose", prose}, // an escape or non-ASCII rune every ~20 bytes
		{"prose_ascii", strings.NewReplacer("ï", "i", "é", "e").Replace(prose)},
		{"paragraphs", paragraphText(220 << 10)}, // a "\n\n" every ~600 bytes
		{"cjk", strings.Repeat("大規模言語モデルは多くの要求を処理する。", (220<<10)/60)},
		{"plain", base64Text(220 << 10)},
	}
	for _, sh := range shapes {
		b.Run(sh.name, func(b *testing.B) {
			body := mustJSON(sh.text)
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
		})
	}
}

package request

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestAppendStringBoundaries decodes strings whose escapes and non-ASCII
// runes fall at every offset of the 8-byte fast path, with and without
// spare capacity in dst, and checks them against encoding/json.
func TestAppendStringBoundaries(t *testing.T) {
	specials := []string{`\n`, `\"`, `\\`, `\u00e9`, `\ud83d\ude00`, `\ud800`, "é", "€", "\xff", "\U0001F600"}
	for _, sp := range specials {
		for pre := 0; pre < 20; pre++ {
			lit := `"` + strings.Repeat("a", pre) + sp + strings.Repeat("b", 20-pre) + `"`
			var want string
			if err := json.Unmarshal([]byte(lit), &want); err != nil {
				t.Fatalf("%s: %v", lit, err)
			}
			for _, room := range []int{0, 3, 64} {
				s := scanner{b: []byte(lit + ",")}
				got, err := s.appendString(make([]byte, 1, 1+room))
				if err != nil || string(got[1:]) != want || s.i != len(lit) {
					t.Fatalf("%q (room %d) = %q, %v at %d; want %q", lit, room, got[1:], err, s.i, want)
				}
			}
			s := scanner{b: []byte(lit)}
			if err := s.skipString(); err != nil || s.i != len(lit) {
				t.Fatalf("skipString(%q): %v at %d", lit, err, s.i)
			}
		}
	}
}

func TestStringErrors(t *testing.T) {
	for _, lit := range []string{`"abc`, `"a\`, `"a\q"`, `"\u12"`, `"\u12g4"`, "\"a\x01\"", "\"aaaaaaaaaaaa\tb\""} {
		s := scanner{b: []byte(lit)}
		if _, err := s.appendString(nil); !isSyntax(err) {
			t.Errorf("appendString(%q): err = %v, want a syntax error", lit, err)
		}
		s = scanner{b: []byte(lit)}
		if err := s.skipString(); !isSyntax(err) {
			t.Errorf("skipString(%q): err = %v, want a syntax error", lit, err)
		}
	}
}

// TestAppendStringLong decodes long strings (prose with escapes, plain
// ASCII, CJK, invalid UTF-8, long escape-free runs) against encoding/json,
// into buffers with and without spare capacity, and validates them with
// skipString.
func TestAppendStringLong(t *testing.T) {
	prose := longText(5000)
	texts := map[string]string{
		"prose":   prose,
		"plain":   strings.Repeat("abcdefghij klmnopqrst ", 300),
		"cjk":     strings.Repeat("大規模言語モデルは多くの要求を処理する。", 200),
		"invalid": strings.Repeat("x", 100) + "\xff\xfe" + strings.Repeat("y", 100) + "\xe2\x82" + strings.Repeat("z", 70),
		"mixed":   strings.Repeat(strings.Repeat("long run ", 20)+"\n\"é€😀\u2028", 50),
	}
	for name, text := range texts {
		lit := mustJSON(text)
		var want string
		if err := json.Unmarshal(lit, &want); err != nil {
			t.Fatal(err)
		}
		for _, room := range []int{0, 7, len(lit)} {
			s := scanner{b: append(lit[:len(lit):len(lit)], '}')}
			got, err := s.appendString(make([]byte, 2, 2+room))
			if err != nil || string(got[2:]) != want || s.i != len(lit) {
				t.Fatalf("%s (room %d): err %v at %d, equal %v", name, room, err, s.i, string(got[2:]) == want)
			}
		}
		s := scanner{b: lit}
		if err := s.skipString(); err != nil || s.i != len(lit) {
			t.Fatalf("skipString(%s): %v at %d", name, err, s.i)
		}
	}
}

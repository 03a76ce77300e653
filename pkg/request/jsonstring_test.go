package request

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TestAppendStringBoundaries decodes strings whose escapes and non-ASCII
// runes fall at every offset of the 8-byte words, before, at and past the
// switch from the word loop to the IndexByte search (shortRun), with and
// without spare capacity in dst, and checks them against encoding/json.
func TestAppendStringBoundaries(t *testing.T) {
	specials := []string{`\n`, `\"`, `\\`, `\/`, `\u00e9`, `\ud83d\ude00`, `\ud800`, `\udc00\ud800`, "é", "€", "\xff", "\xe2\x82", "\U0001F600", "\xed\xa0\x80",
		"\xe0\x80\xaf", "\xc0\xaf", "\xf4\x90\x80\x80", "\xef\xbf\xbd", "\xe0\xa0\x80", "\xed\x9f\xbf", "大規模\xe5\xa4"}
	for _, sp := range specials {
		for pre := 0; pre < 3*shortRun; pre++ {
			lit := `"` + strings.Repeat("a", pre) + sp + strings.Repeat("b", 3*shortRun-pre) + `"`
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

// TestStringErrorOffsets puts a control byte or a bad escape at every
// offset of the word loop and of a long run: both readers must reject it
// at that byte, as before.
func TestStringErrorOffsets(t *testing.T) {
	for _, bad := range []string{"\x01", "\x1f", "\n", `\x`, `\u12x4`} {
		for pre := 0; pre < 3*shortRun; pre++ {
			lit := `"` + strings.Repeat("a", pre) + bad + strings.Repeat("b", 2*shortRun) + `"`
			want := pre + 1
			if bad[0] == '\\' && bad[1] == 'x' {
				want++ // an invalid escape is reported at its second byte
			}
			s := scanner{b: []byte(lit)}
			_, err := s.appendString(nil)
			s2 := scanner{b: []byte(lit)}
			err2 := s2.skipString()
			for _, e := range []error{err, err2} {
				if se, ok := e.(*syntaxError); !ok || se.off != want {
					t.Fatalf("%q: err %v, want a syntax error at %d", lit, e, want)
				}
			}
		}
	}
}

func TestStringErrors(t *testing.T) {
	long := strings.Repeat("a", 3*shortRun)
	for _, lit := range []string{`"abc`, `"a\`, `"a\q"`, `"\u12"`, `"\u12g4"`, "\"a\x01\"", "\"aaaaaaaaaaaa\tb\"",
		`"` + long, `"` + long + `\`, `"` + long + `\u00`, `"` + long + "\x7f\x00\""} {
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

// FuzzString checks appendString and skipString against encoding/json's
// decoder on a string token at the start of the input: same acceptance,
// same end offset and the same decoded text.
func FuzzString(f *testing.F) {
	for _, seed := range []string{`"a\nb"x`, "\"é\xff\\ud83d\\ude00\"", `"` + strings.Repeat("abcdefgh", 6) + `\"`, "\"" + strings.Repeat("z", 40) + "\x01\""} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		if len(body) == 0 || body[0] != '"' {
			return
		}
		s := scanner{b: body}
		got, err := s.appendString(nil)
		s2 := scanner{b: body}
		err2 := s2.skipString()
		dec := json.NewDecoder(bytes.NewReader(body))
		tok, refErr := dec.Token()
		if (err == nil) != (refErr == nil) || (err2 == nil) != (err == nil) {
			t.Fatalf("%q: appendString %v, skipString %v, encoding/json %v", body, err, err2, refErr)
		}
		if err != nil {
			if se, se2 := err.(*syntaxError), err2.(*syntaxError); se.off != se2.off {
				t.Fatalf("%q: appendString fails at %d, skipString at %d", body, se.off, se2.off)
			}
			return
		}
		if string(got) != tok.(string) || s.i != int(dec.InputOffset()) || s2.i != s.i {
			t.Fatalf("%q: got %q ending at %d/%d, encoding/json %q ending at %d", body, got, s.i, s2.i, tok, dec.InputOffset())
		}
	})
}

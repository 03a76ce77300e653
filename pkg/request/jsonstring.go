package request

import (
	"encoding/binary"
	"math/bits"
	"unicode/utf8"
)

const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// plainRun returns the index of the first byte at or after i that a string
// scan must look at: '"', '\\', a control byte, or (if ascii) any byte >=
// 0x80. It checks 8 bytes at a time.
func plainRun(b []byte, i int, ascii bool) int {
	var hiMask uint64
	if ascii {
		hiMask = highs
	}
	for ; i+8 <= len(b); i += 8 {
		x := binary.LittleEndian.Uint64(b[i:])
		if m := specials(x) | x&hiMask; m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
	}
	for ; i < len(b); i++ {
		c := b[i]
		if c == '"' || c == '\\' || c < 0x20 || ascii && c >= 0x80 {
			return i
		}
	}
	return i
}

// escapeLen validates the escape at b[i] == '\\' and returns its length.
func (s *scanner) escapeLen(i int) (int, error) {
	if i+1 >= len(s.b) {
		return 0, s.failAt(i+1, "unexpected end of input in string")
	}
	switch s.b[i+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return 2, nil
	case 'u':
		if hex4(s.b, i+2) < 0 {
			return 0, s.failAt(i, "invalid \\u escape")
		}
		return 6, nil
	}
	return 0, s.failAt(i+1, "invalid escape")
}

// hex4 decodes 4 hex digits at b[i:], -1 if there are not 4.
func hex4(b []byte, i int) rune {
	if i+4 > len(b) {
		return -1
	}
	var r rune
	for _, c := range b[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r<<4 | rune(c)
	}
	return r
}

// specials flags (in the high bit of each byte) the bytes of x that are '"',
// '\\' or control bytes; flags above the lowest may be false positives.
func specials(x uint64) uint64 {
	q, bs := x^(ones*'"'), x^(ones*'\\')
	return ((q-ones)&^q | (bs-ones)&^bs | (x-ones*0x20)&^x) & highs
}

// unescape appends the escape at b[i] == '\\' and returns its length.
func (s *scanner) unescape(dst []byte, i int) ([]byte, int, error) {
	n, err := s.escapeLen(i)
	if err != nil {
		return dst, 0, err
	}
	switch c := s.b[i+1]; c {
	case 'b':
		return append(dst, '\b'), 2, nil
	case 'f':
		return append(dst, '\f'), 2, nil
	case 'n':
		return append(dst, '\n'), 2, nil
	case 'r':
		return append(dst, '\r'), 2, nil
	case 't':
		return append(dst, '\t'), 2, nil
	case 'u':
		return s.unescapeU(dst, i)
	default:
		return append(dst, c), n, nil
	}
}

// unescapeU decodes \uXXXX at b[i], joining a following low surrogate.
func (s *scanner) unescapeU(dst []byte, i int) ([]byte, int, error) {
	r := hex4(s.b, i+2)
	if r >= 0xD800 && r < 0xE000 {
		if r < 0xDC00 && i+7 < len(s.b) && s.b[i+6] == '\\' && s.b[i+7] == 'u' {
			if r2 := hex4(s.b, i+8); r2 >= 0xDC00 && r2 < 0xE000 {
				return utf8.AppendRune(dst, (r-0xD800)<<10|(r2-0xDC00)+0x10000), 12, nil
			}
		}
		r = utf8.RuneError
	}
	return utf8.AppendRune(dst, r), 6, nil
}

// smallString returns the decoded string at s.i: a subslice of the input if
// it has no escapes or non-ASCII bytes, else decoded onto scratch.
func (s *scanner) smallString(scratch []byte) ([]byte, error) {
	start := s.i + 1
	i := plainRun(s.b, start, true)
	if i < len(s.b) && s.b[i] == '"' {
		s.i = i + 1
		return s.b[start:i], nil
	}
	return s.appendString(scratch)
}

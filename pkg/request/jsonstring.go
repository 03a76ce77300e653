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

// skipString validates the string at s.i.
func (s *scanner) skipString() error {
	i := s.i + 1
	for {
		i = plainRun(s.b, i, false)
		if i >= len(s.b) {
			return s.failAt(i, "unexpected end of input in string")
		}
		switch c := s.b[i]; {
		case c == '"':
			s.i = i + 1
			return nil
		case c == '\\':
			n, err := s.escapeLen(i)
			if err != nil {
				return err
			}
			i += n
		default:
			return s.failAt(i, "control character in string")
		}
	}
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

// appendString decodes the string at s.i onto dst the way encoding/json does:
// escapes resolved, surrogate pairs joined, and invalid UTF-8 or lone
// surrogates replaced by U+FFFD. The fast path copies 8 bytes at a time and
// checks UTF-8 once at the end; only invalid UTF-8 takes the slow path.
func (s *scanner) appendString(dst []byte) ([]byte, error) {
	start := len(dst)
	i := s.i + 1
	var high uint64
	for {
		var h uint64
		dst, i, h = copyPlain(dst, s.b, i)
		high |= h
		if i >= len(s.b) {
			return dst, s.failAt(i, "unexpected end of input in string")
		}
		switch c := s.b[i]; {
		case c == '"':
			if high&highs != 0 && !utf8.Valid(dst[start:]) {
				return s.appendStringSlow(dst[:start])
			}
			s.i = i + 1
			return dst, nil
		case c == '\\':
			var n int
			var err error
			if dst, n, err = s.unescape(dst, i); err != nil {
				return dst, err
			}
			i += n
		default:
			return dst, s.failAt(i, "control character in string")
		}
	}
}

// copyPlain appends the bytes from b[i] up to the next '"', '\\' or control
// byte to dst, 8 at a time while dst has spare capacity, and returns the OR
// of the bytes copied (to detect non-ASCII).
func copyPlain(dst, b []byte, i int) ([]byte, int, uint64) {
	w, full := len(dst), dst[:cap(dst)]
	var high uint64
	for i+8 <= len(b) && w+8 <= len(full) {
		x := binary.LittleEndian.Uint64(b[i:])
		binary.LittleEndian.PutUint64(full[w:], x)
		if m := specials(x); m != 0 {
			k := bits.TrailingZeros64(m) >> 3
			return full[:w+k], i + k, high | x&(1<<(8*k)-1)
		}
		high |= x
		w, i = w+8, i+8
	}
	dst = full[:w]
	j := plainRun(b, i, false)
	for _, c := range b[i:j] {
		high |= uint64(c)
	}
	return append(dst, b[i:j]...), j, high
}

// specials flags (in the high bit of each byte) the bytes of x that are '"',
// '\\' or control bytes; flags above the lowest may be false positives.
func specials(x uint64) uint64 {
	q, bs := x^(ones*'"'), x^(ones*'\\')
	return ((q-ones)&^q | (bs-ones)&^bs | (x-ones*0x20)&^x) & highs
}

// appendStringSlow is appendString checking UTF-8 rune by rune, replacing
// invalid bytes with U+FFFD as encoding/json does.
func (s *scanner) appendStringSlow(dst []byte) ([]byte, error) {
	start := s.i + 1
	i := start
	for {
		i = plainRun(s.b, i, true)
		if i >= len(s.b) {
			return dst, s.failAt(i, "unexpected end of input in string")
		}
		c := s.b[i]
		if c >= 0x80 {
			if n := runeLen(s.b, i); n > 0 {
				i += n
				continue
			}
			dst = append(append(dst, s.b[start:i]...), "\uFFFD"...)
			i++
			start = i
			continue
		}
		dst = append(dst, s.b[start:i]...)
		switch {
		case c == '"':
			s.i = i + 1
			return dst, nil
		case c == '\\':
			var n int
			var err error
			if dst, n, err = s.unescape(dst, i); err != nil {
				return dst, err
			}
			i += n
			start = i
		default:
			return dst, s.failAt(i, "control character in string")
		}
	}
}

// runeLen returns the length of the valid UTF-8 sequence at b[i] (>= 0x80),
// 0 if it is invalid. Two-byte sequences (Latin, Greek, Cyrillic) are
// checked inline.
func runeLen(b []byte, i int) int {
	if c := b[i]; c >= 0xC2 && c <= 0xDF && i+1 < len(b) && b[i+1]&0xC0 == 0x80 {
		return 2
	}
	r, size := utf8.DecodeRune(b[i:])
	if r == utf8.RuneError && size == 1 {
		return 0
	}
	return size
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

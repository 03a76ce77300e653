package request

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"unicode/utf8"
)

// Strings are decoded in stretches of plain bytes. A short stretch (prose
// has an escape or a non-ASCII rune every few dozen bytes) is found and
// copied 8 bytes at a time with a SWAR check; once a stretch runs past
// shortRun bytes, its end is found with bytes.IndexByte (vectorised in the
// runtime), its bytes checked with a branch-free word loop and appended
// with one copy.

// shortRun is how far the SWAR copy goes before switching to the
// vectorised search.
const shortRun = 32

// appendString decodes the string at s.i onto dst the way encoding/json does:
// escapes resolved, surrogate pairs joined, and invalid UTF-8 or lone
// surrogates replaced by U+FFFD.
func (s *scanner) appendString(dst []byte) ([]byte, error) {
	b, i := s.b, s.i+1
	q := -1 // the next '"' at or after i, escaped or not; len(b) if none
	for {
		var more bool
		if dst, i, more = copyShort(dst, b, i); more {
			end := runEnd(b, i, &q)
			var bad int
			if dst, bad = appendRun(dst, b, i, end); bad >= 0 {
				return dst, s.failAt(bad, "control character in string")
			}
			i = end
		}
		if i >= len(b) {
			return dst, s.failAt(i, "unexpected end of input in string")
		}
		switch c := b[i]; {
		case c == '"':
			s.i = i + 1
			return dst, nil
		case c == '\\':
			if i+1 < len(b) && unquote[b[i+1]] != 0 {
				dst, i = append(dst, unquote[b[i+1]]), i+2
				continue
			}
			var n int
			var err error
			if dst, n, err = s.unescape(dst, i); err != nil {
				return dst, err
			}
			i += n
		case c >= 0xC2 && c <= 0xDF && i+1 < len(b) && b[i+1]&0xC0 == 0x80:
			dst, i = append(dst, c, b[i+1]), i+2 // a lone Latin letter in ASCII text
		case c >= utf8.RuneSelf:
			var n int
			dst, n = appendRunes(dst, b[i:])
			i += n
		case c < 0x20:
			return dst, s.failAt(i, "control character in string")
		default: // copyShort stopped short: dst or b had under 8 bytes left
			dst, i = append(dst, c), i+1
		}
	}
}

// unquote maps the byte after a backslash to what the escape stands for,
// 0 for 'u' and invalid escapes (which take the general path).
var unquote = [256]byte{
	'"': '"', '\\': '\\', '/': '/',
	'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t',
}

// copyShort appends plain bytes from b[i] to dst, 8 at a time into dst's
// spare capacity, and returns the index of the first byte it did not copy.
// It stops at '"', '\\', a control or a non-ASCII byte (more false), or
// after shortRun plain bytes (more true); it may also stop early, at any
// byte, when dst has less than 8 bytes to spare or b less than 8 left.
func copyShort(dst, b []byte, i int) ([]byte, int, bool) {
	if i >= len(b) {
		return dst, i, false
	}
	src, out := b[i:], dst[len(dst):cap(dst)]
	for n := 0; n < shortRun; n += 8 {
		if len(src) < n+8 || len(out) < n+8 {
			return dst[:len(dst)+n], i + n, false
		}
		x := binary.LittleEndian.Uint64(src[n:])
		binary.LittleEndian.PutUint64(out[n:], x)
		if m := stops(x); m != 0 {
			n += bits.TrailingZeros64(m) >> 3
			return dst[:len(dst)+n], i + n, false
		}
	}
	return dst[:len(dst)+shortRun], i + shortRun, true
}

// runEnd returns the index of the next '"' or '\\' at or after i, len(b) if
// there is none. *q caches the next '"' (-1 at first): a run of escapes
// does not search for the same quote again.
func runEnd(b []byte, i int, q *int) int {
	if *q < i {
		*q = indexFrom(b, i, '"')
	}
	if k := bytes.IndexByte(b[i:*q], '\\'); k >= 0 {
		return i + k
	}
	return *q
}

// indexFrom returns the index of the first c in b at or after i, len(b) if
// there is none.
func indexFrom(b []byte, i int, c byte) int {
	if k := bytes.IndexByte(b[i:], c); k >= 0 {
		return i + k
	}
	return len(b)
}

// appendRun appends b[i:end], which holds no '"' or '\\', replacing invalid
// UTF-8 with U+FFFD. It returns the offset of the first control byte, or -1.
func appendRun(dst, b []byte, i, end int) ([]byte, int) {
	run := b[i:end]
	if plain(run) {
		return append(dst, run...), -1
	}
	for len(run) > 0 {
		k := firstUnplain(run)
		dst = append(dst, run[:k]...)
		if run = run[k:]; len(run) == 0 {
			break
		}
		if run[0] < 0x20 {
			return dst, end - len(run)
		}
		dst, k = appendRunes(dst, run)
		run = run[k:]
	}
	return dst, -1
}

// plain reports whether b holds only printable ASCII (no control bytes, no
// bytes >= 0x80), checking 8 bytes a step without branching on the data.
func plain(b []byte) bool {
	var acc uint64
	for ; len(b) >= 32; b = b[32:] {
		x0, x1 := binary.LittleEndian.Uint64(b), binary.LittleEndian.Uint64(b[8:])
		x2, x3 := binary.LittleEndian.Uint64(b[16:]), binary.LittleEndian.Uint64(b[24:])
		acc |= (x0 - ones*0x20) | x0 | (x1 - ones*0x20) | x1 | (x2 - ones*0x20) | x2 | (x3 - ones*0x20) | x3
	}
	for ; len(b) >= 8; b = b[8:] {
		x := binary.LittleEndian.Uint64(b)
		acc |= (x - ones*0x20) | x
	}
	for _, c := range b {
		acc |= uint64(c-0x20) | uint64(c)
	}
	return acc&highs == 0
}

// stops flags (in the high bit of each byte) the bytes of x that are '"',
// '\\', control or non-ASCII; flags above the lowest may be false positives
// (from borrows). Since x's own high bits flag the non-ASCII bytes, the
// equality tests need not mask them out.
func stops(x uint64) uint64 {
	q, bs := x^(ones*'"'), x^(ones*'\\')
	return ((q - ones) | (bs - ones) | (x - ones*0x20) | x) & highs
}

// firstUnplain returns the index of the first control or non-ASCII byte in
// b, len(b) if there is none.
func firstUnplain(b []byte) int {
	i := 0
	for ; i+8 <= len(b); i += 8 {
		x := binary.LittleEndian.Uint64(b[i:])
		if m := ((x - ones*0x20) | x) & highs; m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
	}
	for ; i < len(b) && b[i] >= 0x20 && b[i] < utf8.RuneSelf; i++ {
	}
	return i
}

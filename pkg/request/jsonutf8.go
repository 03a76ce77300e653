package request

import "unicode/utf8"

// UTF-8 in strings is checked the way encoding/json decodes it: each byte
// that does not begin a valid sequence becomes U+FFFD.

// appendRunes appends the valid non-ASCII runes at the start of b with one
// copy, or U+FFFD if b starts with a byte that does not begin a valid UTF-8
// sequence (encoding/json replaces each such byte), and returns how many
// bytes of b it read.
func appendRunes(dst, b []byte) ([]byte, int) {
	n := validRunes(b)
	if n == 0 && len(b) > 0 && b[0] >= utf8.RuneSelf {
		return append(dst, "\uFFFD"...), 1
	}
	return append(dst, b[:n]...), n
}

// validRunes returns the length of the valid multi-byte UTF-8 sequences at
// the start of b, up to the first ASCII byte, invalid sequence or the end.
// Two- and three-byte sequences (Latin to CJK) are checked inline.
func validRunes(b []byte) int {
	i := 0
	for i < len(b) {
		c := b[i]
		switch {
		case c < utf8.RuneSelf:
			return i
		case c >= 0xC2 && c <= 0xDF:
			if i+1 < len(b) && b[i+1]&0xC0 == 0x80 {
				i += 2
				continue
			}
		case c >= 0xE0 && c <= 0xEF:
			if i+2 < len(b) && secondOK3(c, b[i+1]) && b[i+2]&0xC0 == 0x80 {
				i += 3
				continue
			}
		default:
			if n := runeLen(b, i); n > 0 {
				i += n
				continue
			}
		}
		return i
	}
	return i
}

// secondOK3 reports whether c2 may follow the three-byte lead c: E0 needs
// A0..BF (no overlong forms), ED needs 80..9F (no surrogates).
func secondOK3(c, c2 byte) bool {
	lo, hi := byte(0x80), byte(0xBF)
	if c == 0xE0 {
		lo = 0xA0
	}
	if c == 0xED {
		hi = 0x9F
	}
	return c2 >= lo && c2 <= hi
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

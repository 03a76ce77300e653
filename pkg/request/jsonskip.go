package request

import (
	"encoding/binary"
	"math/bits"
)

// skipString validates the string at s.i like appendString, without
// decoding: short stretches are checked 8 bytes at a time, long ones are
// found with bytes.IndexByte and checked for control bytes with a
// branch-free word loop. Invalid UTF-8 is accepted, as encoding/json does.
func (s *scanner) skipString() error {
	b, i := s.b, s.i+1
	q := -1 // see runEnd
	for {
		var more bool
		if i, more = skipShort(b, i); more {
			end := runEnd(b, i, &q)
			if k := firstControl(b[i:end]); k >= 0 {
				return s.failAt(i+k, "control character in string")
			}
			i = end
		}
		if i >= len(b) {
			return s.failAt(i, "unexpected end of input in string")
		}
		switch c := b[i]; {
		case c == '"':
			s.i = i + 1
			return nil
		case c == '\\':
			if i+1 < len(b) && unquote[b[i+1]] != 0 {
				i += 2
				continue
			}
			n, err := s.escapeLen(i)
			if err != nil {
				return err
			}
			i += n
		case c < 0x20:
			return s.failAt(i, "control character in string")
		default: // fewer than 8 bytes left
			i++
		}
	}
}

// skipShort returns the index of the first '"', '\\' or control byte at or
// after i (more false), or i+shortRun if there is none that close (more
// true). It reads 8 bytes at a time, so it may stop early, at any byte,
// when fewer than 8 are left.
func skipShort(b []byte, i int) (int, bool) {
	if i >= len(b) {
		return i, false
	}
	src := b[i:]
	for n := 0; n < shortRun; n += 8 {
		if len(src) < n+8 {
			return i + n, false
		}
		if m := specials(binary.LittleEndian.Uint64(src[n:])); m != 0 {
			return i + n + bits.TrailingZeros64(m)>>3, false
		}
	}
	return i + shortRun, true
}

// firstControl returns the index of the first control byte in b, -1 if
// there is none. The common case, none, is checked without branching on
// the data.
func firstControl(b []byte) int {
	var acc uint64
	w := b
	for ; len(w) >= 32; w = w[32:] {
		x0, x1 := binary.LittleEndian.Uint64(w), binary.LittleEndian.Uint64(w[8:])
		x2, x3 := binary.LittleEndian.Uint64(w[16:]), binary.LittleEndian.Uint64(w[24:])
		acc |= (x0-ones*0x20)&^x0 | (x1-ones*0x20)&^x1 | (x2-ones*0x20)&^x2 | (x3-ones*0x20)&^x3
	}
	for ; len(w) >= 8; w = w[8:] {
		x := binary.LittleEndian.Uint64(w)
		acc |= (x - ones*0x20) &^ x
	}
	for _, c := range w {
		acc |= uint64(c - 0x20)
	}
	if acc&highs == 0 {
		return -1
	}
	for k, c := range b {
		if c < 0x20 {
			return k
		}
	}
	return -1
}

package tokenize

import "math/bits"

// Block-wise piece boundaries. Approx's rules make a byte start a piece from
// local facts only: its class, its neighbours' classes, and the distance to
// the start of its run. So the text is classified 64 bytes at a time into
// bitmaps (bit k = byte k of the block) and the piece starts of the block are
// computed with shifts and masks, without a branch per byte; Approx then
// walks the start bits. The few facts that cross a block edge (the previous
// block's classes, run lengths and unfinished pieces, the next block's first
// byte) are carried explicitly.

// SWAR constants: per-byte lanes of a little-endian uint64.
const (
	lanes1 = 0x0101010101010101
	laneHi = 0x80 * lanes1
	laneLo = 0x7f * lanes1
	// gather7 moves the high bit of lane i to bit 56+i when multiplied by a
	// value whose only set bits are lane high bits.
	gather7 = 0x0002040810204081
)

// classMasks are a block's class bitmaps.
type classMasks struct {
	word  uint64 // word bytes
	space uint64 // whitespace bytes
	blank uint64 // ' ' bytes (a subset of space)
}

// inRange sets the high bit of each lane of y (lanes < 0x80) in [lo, hi].
func inRange(y uint64, lo, hi byte) uint64 {
	return (y + (0x80-uint64(lo))*lanes1) &^ (y + (0x7f-uint64(hi))*lanes1)
}

// notEq sets the high bit of each lane of y (lanes < 0x80) not equal to c.
func notEq(y uint64, c byte) uint64 {
	z := y ^ uint64(c)*lanes1
	return (z + laneLo) | z
}

// classify8 returns, as lane high bits, which of the 8 bytes in v are word
// bytes, whitespace and ' '.
func classify8(v uint64) (word, space, blank uint64) {
	y := v & laneLo
	alnum := inRange(y|0x20*lanes1, 'a', 'z') | inRange(y, '0', '9')
	word = (v | alnum | ^notEq(y, '_')) & laneHi
	blank = ^(notEq(y, ' ') | v) & laneHi
	space = inRange(y, '\t', '\r')&^v&laneHi | blank
	return word, space, blank
}

// gather packs the lane high bits of x into the low 8 bits.
func gather(x uint64) uint64 { return x * gather7 >> 56 }

// classifyBlock classifies chunk, which must hold exactly 64 bytes. The
// lane tests of classify8 are written out here: as a call per 8 bytes they
// cost a third more.
func classifyBlock[T string | []byte](chunk T) (m classMasks) {
	if len(chunk) < 64 {
		return m
	}
	for k := 0; k < 64; k += 8 {
		v := le64(chunk[k : k+8])
		y := v & laneLo
		alnum := inRange(y|0x20*lanes1, 'a', 'z') | inRange(y, '0', '9')
		w := (v | alnum | ^notEq(y, '_')) & laneHi
		b := ^(notEq(y, ' ') | v) & laneHi
		s := inRange(y, '\t', '\r')&^v&laneHi | b
		m.word |= gather(w) << k
		m.space |= gather(s) << k
		m.blank |= gather(b) << k
	}
	return m
}

// le64 loads 8 bytes little-endian (s must hold at least 8).
func le64[T string | []byte](s T) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// isWordByte reports whether c is a word byte.
func isWordByte(c byte) bool {
	w, _, _ := classify8(uint64(c))
	return w&0x80 != 0
}

// boundaries carries the cross-block state of the piece-start computation.
// Each field is the previous block's bitmap of the same name in starts.
type boundaries struct {
	word, word2, word4    uint64
	wordCont              uint64 // word | spWord: a word byte after these continues a piece
	sp, sp2, sp4, sp8     uint64
	punct, punct2, punct4 uint64
	// carried piece starts (bit k = byte k of the next block) that continue
	// a word, whitespace or punctuation run across the block edge.
	carryWord, carrySpace, carryPunct uint64
}

// shl shifts the 128-bit value prev:cur left by k (1 <= k <= 63) and returns
// the low 64 bits: bit i is bit i-k of the stream.
func shl(cur, prev uint64, k uint) uint64 { return cur<<k | prev>>(64-k) }

// starts returns the piece starts of a block with class bitmaps m, where
// valid marks the bytes inside the text and nextWord whether the byte after
// the block is a word byte.
func (b *boundaries) starts(m classMasks, valid uint64, nextWord bool) uint64 {
	// spWord: a ' ' directly before a word byte, which starts that word's piece.
	spWord := m.blank & (m.word>>1 | b2u(nextWord)<<63)
	sp := m.space &^ spWord
	punct := ^(m.word | m.space) & valid

	wordStart := m.word &^ shl(m.word|spWord, b.wordCont, 1)
	spStart := sp &^ shl(sp, b.sp, 1)
	punctStart := punct &^ shl(punct, b.punct, 1)

	// runN: the byte and the N-1 before it are all of the class, so a piece
	// started N-1 bytes back (or N for spWord, whose space is extra) ends here.
	word2 := m.word & shl(m.word, b.word, 1)
	word4 := word2 & shl(word2, b.word2, 2)
	word5 := word4 & shl(word4, b.word4, 1)
	sp2 := sp & shl(sp, b.sp, 1)
	sp4 := sp2 & shl(sp2, b.sp2, 2)
	sp8 := sp4 & shl(sp4, b.sp4, 4)
	sp9 := sp8 & shl(sp8, b.sp8, 1)
	punct2 := punct & shl(punct, b.punct, 1)
	punct4 := punct2 & shl(punct2, b.punct2, 2)
	punct5 := punct4 & shl(punct4, b.punct4, 1)

	all := spWord | wordStart | spStart | punctStart
	cw := wordStart>>(64-maxWord) | spWord>>(64-maxWord-1)
	cs := spStart >> (64 - maxSpace)
	cp := punctStart >> (64 - maxPunct)
	nw := (wordStart<<maxWord | spWord<<(maxWord+1) | b.carryWord) & word5
	ns := (spStart<<maxSpace | b.carrySpace) & sp9
	np := (punctStart<<maxPunct | b.carryPunct) & punct5
	// Each round adds the next piece of every run still going: a few rounds
	// for prose, 16 for a block-long run.
	for nw|ns|np != 0 {
		all |= nw | ns | np
		cw |= nw >> (64 - maxWord)
		cs |= ns >> (64 - maxSpace)
		cp |= np >> (64 - maxPunct)
		nw = nw << maxWord & word5
		ns = ns << maxSpace & sp9
		np = np << maxPunct & punct5
	}
	*b = boundaries{
		word: m.word, word2: word2, word4: word4, wordCont: m.word | spWord,
		sp: sp, sp2: sp2, sp4: sp4, sp8: sp8,
		punct: punct, punct2: punct2, punct4: punct4,
		carryWord: cw, carrySpace: cs, carryPunct: cp,
	}
	return all & valid
}

// b2u is 1 for true, 0 for false.
func b2u(v bool) uint64 {
	if v {
		return 1
	}
	return 0
}

// popcount is the number of set bits of x.
func popcount(x uint64) int { return bits.OnesCount64(x) }

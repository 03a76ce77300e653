package tokenize

// Block-wise piece boundaries. Approx's rules make a byte start a piece from
// local facts only: its class, its neighbours' classes, and the distance to
// the start of its run. So the text is classified 64 bytes at a time into
// bitmaps (bit k = byte k of the block) and the piece starts of the block are
// computed with shifts and masks, without a branch per byte; Approx then
// walks the start bits. The few facts that cross a block edge (the previous
// block's classes, run lengths and unfinished pieces, the next block's first
// byte) are carried explicitly.

// classTable[c] has bit 0 set if c is a word byte, bit 16 if whitespace and
// bit 32 if ' ': the lookups of 16 bytes, each shifted by its offset and
// or-ed together, hold the three 16-bit class bitmaps side by side. (Twice as
// fast as classifying 8 bytes at once with SWAR arithmetic.)
var classTable = func() (t [256]uint64) {
	for i := range t {
		c := byte(i)
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_', c >= 0x80:
			t[i] = 1
		case c == ' ':
			t[i] = 1<<16 | 1<<32
		case c == '\t', c == '\n', c == '\r', c == '\v', c == '\f':
			t[i] = 1 << 16
		}
	}
	return t
}()

// classMasks are a block's class bitmaps (bit k: byte k of the block).
type classMasks struct {
	word  uint64 // word bytes
	space uint64 // whitespace bytes
	blank uint64 // ' ' bytes (a subset of space)
}

// classifyBlock classifies chunk, which must hold exactly 64 bytes.
func classifyBlock[T string | []byte](chunk T) (m classMasks) {
	if len(chunk) < 64 {
		return m
	}
	for g := 0; g < 64; g += 16 {
		c := chunk[g : g+16]
		t := &classTable
		acc := t[c[0]] | t[c[1]]<<1 | t[c[2]]<<2 | t[c[3]]<<3 |
			t[c[4]]<<4 | t[c[5]]<<5 | t[c[6]]<<6 | t[c[7]]<<7 |
			t[c[8]]<<8 | t[c[9]]<<9 | t[c[10]]<<10 | t[c[11]]<<11 |
			t[c[12]]<<12 | t[c[13]]<<13 | t[c[14]]<<14 | t[c[15]]<<15
		m.word |= acc & 0xffff << g
		m.space |= acc >> 16 & 0xffff << g
		m.blank |= acc >> 32 & 0xffff << g
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
func isWordByte(c byte) bool { return classTable[c]&1 != 0 }

// boundaries carries the cross-block state of the piece-start computation.
type boundaries struct {
	// the previous block's bitmaps of the same names in starts
	word, wordCont, sp, punct uint64
	// carried piece starts (bit k = byte k of the next block) that continue
	// a word, whitespace or punctuation run across the block edge, if the run
	// does go on
	carryWord, carrySpace, carryPunct uint64
}

// shl shifts the 128-bit value prev:cur left by k (1 <= k <= 63) and returns
// the low 64 bits: bit i is bit i-k of the stream.
func shl(cur, prev uint64, k uint) uint64 { return cur<<k | prev>>(64-k) }

// run4 marks the bytes that end 4 consecutive set bits of the stream prev:cur.
func run4(cur, prev uint64) uint64 {
	cur2, prev2 := cur&shl(cur, prev, 1), prev&(prev<<1) // prev2's top bits are exact
	return cur2 & shl(cur2, prev2, 2)
}

// chunks follows runs piece by piece: next holds candidate starts c bytes
// after known ones, kept where run says the c bytes up to them continue the
// run. It returns the starts found and those that fall in the next block.
func chunks(next, run uint64, c uint) (all, carry uint64) {
	for next &= run; next != 0; next = next << c & run {
		all |= next
		carry |= next >> (64 - c)
	}
	return all, carry
}

// starts returns the piece starts of a block with class bitmaps m, where
// valid marks the bytes inside the text and nextWord whether the byte after
// the block is a word byte.
func (b *boundaries) starts(m classMasks, valid uint64, nextWord bool) uint64 {
	// spWord: a ' ' directly before a word byte, which starts that word's piece.
	spWord := m.blank & (m.word>>1 | b2u(nextWord)<<63)
	sp := m.space &^ spWord
	punct := ^(m.word | m.space) & valid
	wordCont := m.word | spWord // a word byte after these is not a run start

	wordStart := m.word &^ shl(wordCont, b.wordCont, 1)
	spStart := sp &^ shl(sp, b.sp, 1)
	punctStart := punct &^ shl(punct, b.punct, 1)
	all := spWord | wordStart | spStart | punctStart

	// A piece ends after maxWord word bytes (plus its leading space), so a
	// new one starts there if the run goes on. The byte after a spWord is a
	// word byte, so both need the 4 bytes up to the new start to be words.
	w, cw := chunks(wordStart<<maxWord|spWord<<(maxWord+1)|b.carryWord, run4(m.word, b.word), maxWord)
	all |= w
	cw |= wordStart>>(64-maxWord) | spWord>>(64-maxWord-1)
	// Runs of 8+ whitespace or 5+ punctuation bytes are rare in prose: test
	// for a candidate before computing the run bitmaps.
	cs := spStart >> (64 - maxSpace)
	if next := spStart<<maxSpace | b.carrySpace; next&sp != 0 {
		// Runs of 8: two runs of 4, the earlier one's end 4 bytes back.
		sp4, prev2 := run4(sp, b.sp), b.sp&(b.sp<<1)
		s, c := chunks(next, sp4&shl(sp4, prev2&(prev2<<2), 4), maxSpace)
		all, cs = all|s, cs|c
	}
	cp := punctStart >> (64 - maxPunct)
	if next := punctStart<<maxPunct | b.carryPunct; next&punct != 0 {
		p, c := chunks(next, run4(punct, b.punct), maxPunct)
		all, cp = all|p, cp|c
	}
	// Field by field: a composite literal is built on the stack and copied
	// with 16-byte moves that stall on its 8-byte stores.
	b.word, b.wordCont, b.sp, b.punct = m.word, wordCont, sp, punct
	b.carryWord, b.carrySpace, b.carryPunct = cw, cs, cp
	return all & valid
}

// b2u is 1 for true, 0 for false.
func b2u(v bool) uint64 {
	if v {
		return 1
	}
	return 0
}

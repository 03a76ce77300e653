// Package tokenize turns prompt text into token ids: exactly, by asking a
// model server's /tokenize endpoint, or approximately, with a deterministic
// vocabulary-free splitter (Approx) that the simulated model server also uses
// as its real tokenizer, so on a simulated fleet both sides agree.
package tokenize

import (
	"math/bits"
	"slices"
)

// VocabSize bounds the ids Approx produces: every id is in [0, VocabSize).
const VocabSize = 1 << 17

// Approx splitting rules (deterministic, left to right, one byte of lookahead):
//
//   - Bytes are word bytes (ASCII letters, digits, '_' and every byte >= 0x80,
//     so UTF-8 text is split by bytes, never decoded), whitespace (' ', \t,
//     \n, \r, \v, \f) or punctuation (everything else).
//   - A run of word bytes is split into pieces of at most 4 bytes. A single
//     space directly before a word run attaches to its first piece, as in
//     GPT-style tokenizers (" the" is one token); that space does not count
//     towards the 4 bytes.
//   - Any other whitespace run is its own token, split every 8 bytes.
//   - A run of punctuation is split into pieces of at most 4 bytes.
//
// A piece's id is a multiplicative hash of its bytes packed into a uint64
// (every piece is at most 8 bytes), with its length mixed in, reduced to
// [0, VocabSize). English prose comes out at about 4 bytes per token.
//
// Prefix property: a piece ends depending only on its bytes and the one byte
// after it, so two texts that agree on their first n bytes produce identical
// tokens for every piece that ends before byte n-1.

const (
	maxWord  = 4
	maxPunct = 4
	maxSpace = 8

	hashMul = 0x9E3779B97F4A7C15
	idShift = 64 - 17

	blockSize = 64 // bytes per bitmap block
)

// pieceID hashes up to 8 packed piece bytes and the piece length to an id.
func pieceID(packed uint64, n int) uint32 {
	h := (packed ^ uint64(n)<<59 ^ 0x5bd1e995) * hashMul
	h ^= h >> 29
	h *= hashMul
	return uint32(h >> idShift)
}

// pieceLen.mask[n] keeps the low n bytes of a uint64, and pieceLen.salt[n]
// is the length term pieceID mixes in for an n-byte piece.
var pieceLen = func() (t struct{ mask, salt [16]uint64 }) {
	for n := range t.mask {
		t.mask[n] = ^uint64(0) >> ((64 - 8*n) & 63)
		t.salt[n] = uint64(n)<<59 ^ 0x5bd1e995
	}
	return t
}()

// Approx appends the approximate tokens of text to dst and returns it. It is
// pure and safe for concurrent use, and allocates only when dst lacks
// capacity (then once, for about len(text)/3 ids, on prose). It finds the
// piece starts 64 bytes at a time (approx_block.go) and emits the ids of the
// pieces between them.
func Approx(dst []uint32, text string) []uint32 {
	if len(text) == 0 {
		return dst
	}
	var bd boundaries
	start, base := 0, 0 // start: of the piece not yet emitted
	first := ^uint64(1) // the first piece is emitted when the second starts
	// Blocks with 8 bytes of text after them: every piece loads in one go.
	for ; base+blockSize+8 <= len(text); base += blockSize {
		st := bd.starts(classifyText(text, base), ^uint64(0), isWordByte(text[base+blockSize])) & first
		first = ^uint64(0)
		n := bits.OnesCount64(st)
		dst = reserve(dst, n, len(text)-base)
		start = emitFast(dst[len(dst)-n:], text, base, st, start)
	}
	for ; base < len(text); base += blockSize {
		st := blockStarts(&bd, text, base) & first
		first = ^uint64(0)
		n := bits.OnesCount64(st)
		dst = reserve(dst, n, len(text)-base)
		start = emitTail(dst[len(dst)-n:], text, base, st, start)
	}
	return append(dst, pieceAt(text, start, len(text)-start))
}

// reserve extends dst by n ids (to be written), growing it for a third of the
// rest bytes of text more if it lacks capacity.
func reserve(dst []uint32, n, rest int) []uint32 {
	if cap(dst)-len(dst) < n {
		dst = grow(dst, n, rest)
	}
	return dst[:len(dst)+n]
}

// CountApprox returns len(Approx(nil, text)) without allocating. It is pure
// and safe for concurrent use.
func CountApprox(text string) int {
	var bd boundaries
	n := 0
	for base := 0; base < len(text); base += blockSize {
		n += bits.OnesCount64(blockStarts(&bd, text, base))
	}
	return n
}

// blockStarts returns the piece starts in the block of text at base.
func blockStarts(bd *boundaries, text string, base int) uint64 {
	if end := base + blockSize; end <= len(text) {
		next := end < len(text) && isWordByte(text[end])
		return bd.starts(classifyText(text, base), ^uint64(0), next)
	}
	var buf [blockSize]byte // zero padding classifies as punctuation, masked off
	n := copy(buf[:], text[base:])
	return bd.starts(classifyBuf(&buf), 1<<n-1, false)
}

// emitFastGeneric writes to out the ids of the pieces that end at the starts
// st of the block at base, the first of them beginning at start, and returns
// the start of the piece still open. out has a slot per bit of st, and text
// 8 bytes from every piece start on.
func emitFastGeneric(out []uint32, text string, base int, st uint64, start int) int {
	// st != 0 as the loop test lets TrailingZeros64 skip its zero case.
	for k := 0; st != 0; k++ {
		p := base + bits.TrailingZeros64(st)
		st &= st - 1
		// 1 <= p-start <= 8; the mask drops a bounds check.
		n := (p - start) & 15
		h := (le64(text[start:start+8])&pieceLen.mask[n] ^ pieceLen.salt[n]) * hashMul // pieceID
		h ^= h >> 29
		h *= hashMul
		out[k] = uint32(h >> idShift)
		start = p
	}
	return start
}

// emitTail is emitFast for the last blocks, where a piece may end less than
// 8 bytes before the end of text.
func emitTail(out []uint32, text string, base int, st uint64, start int) int {
	for k := range out {
		p := base + bits.TrailingZeros64(st)
		st &= st - 1
		out[k] = pieceAt(text, start, p-start)
		start = p
	}
	return start
}

// grow makes room in dst for n more ids, and for a third of the rest bytes
// of text more, so prose needs a single allocation.
//
//go:noinline
func grow(dst []uint32, n, rest int) []uint32 {
	return slices.Grow(dst, max(n, rest/3+blockSize))
}

// loadShort packs the up to 8 bytes of s little-endian.
func loadShort(s string) uint64 {
	var v uint64
	for k := min(len(s), 8) - 1; k >= 0; k-- {
		v = v<<8 | uint64(s[k])
	}
	return v
}

// pieceAt returns the id of the n-byte piece (1 <= n <= 8) at text[i:].
func pieceAt(text string, i, n int) uint32 {
	v := loadShort(text[i:])
	return pieceID(v&(^uint64(0)>>((64-8*n)&63)), n)
}

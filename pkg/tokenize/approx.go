// Package tokenize turns prompt text into token ids: exactly, by asking a
// model server's /tokenize endpoint, or approximately, with a deterministic
// vocabulary-free splitter (Approx) that the simulated model server also uses
// as its real tokenizer, so on a simulated fleet both sides agree.
package tokenize

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
	clsWord  = 0
	clsSpace = 1
	clsPunct = 2

	maxWord  = 4
	maxPunct = 4
	maxSpace = 8

	hashMul = 0x9E3779B97F4A7C15
	idShift = 64 - 17
)

// class maps a byte to clsWord, clsSpace or clsPunct.
var class = func() (t [256]uint8) {
	for i := range t {
		c := byte(i)
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_', c >= 0x80:
			t[i] = clsWord
		case c == ' ', c == '\t', c == '\n', c == '\r', c == '\v', c == '\f':
			t[i] = clsSpace
		default:
			t[i] = clsPunct
		}
	}
	return t
}()

// pieceID hashes up to 8 packed piece bytes and the piece length to an id.
func pieceID(packed uint64, n int) uint32 {
	h := (packed ^ uint64(n)<<59 ^ 0x5bd1e995) * hashMul
	h ^= h >> 29
	h *= hashMul
	return uint32(h >> idShift)
}

// next returns the end of the piece starting at i (i < len(text)) and the
// piece's bytes packed little-endian.
func next(text string, i int) (int, uint64) {
	c := text[i]
	switch class[c] {
	case clsWord:
		return runOf(text, i, 0, clsWord, maxWord)
	case clsSpace:
		if c == ' ' && i+1 < len(text) && class[text[i+1]] == clsWord {
			return runOf(text, i+1, ' ', clsWord, maxWord)
		}
		return spaceRun(text, i)
	default:
		return runOf(text, i, 0, clsPunct, maxPunct)
	}
}

// runOf packs up to max bytes of class cls starting at i after the already
// packed prefix (a leading space or 0).
func runOf(text string, i int, packed uint64, cls uint8, max int) (int, uint64) {
	shift := uint(0)
	if packed != 0 {
		shift = 8
	}
	end := i + max
	if end > len(text) {
		end = len(text)
	}
	j := i
	for ; j < end && class[text[j]] == cls; j++ {
		packed |= uint64(text[j]) << shift
		shift += 8
	}
	return j, packed
}

// spaceRun packs a whitespace run of up to maxSpace bytes. It stops before a
// space that directly precedes a word, which belongs to that word.
func spaceRun(text string, i int) (int, uint64) {
	var packed uint64
	end := i + maxSpace
	if end > len(text) {
		end = len(text)
	}
	j := i
	for ; j < end && class[text[j]] == clsSpace; j++ {
		if text[j] == ' ' && j > i && j+1 < len(text) && class[text[j+1]] == clsWord {
			break
		}
		packed |= uint64(text[j]) << (8 * uint(j-i))
	}
	return j, packed
}

// Approx appends the approximate tokens of text to dst and returns it. It is
// pure and allocates only when dst lacks capacity.
func Approx(dst []uint32, text string) []uint32 {
	for i := 0; i < len(text); {
		j, packed := next(text, i)
		dst = append(dst, pieceID(packed, j-i))
		i = j
	}
	return dst
}

// CountApprox returns len(Approx(nil, text)) without allocating.
func CountApprox(text string) int {
	n := 0
	for i := 0; i < len(text); n++ {
		i, _ = next(text, i)
	}
	return n
}

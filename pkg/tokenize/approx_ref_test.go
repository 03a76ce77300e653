package tokenize

import "testing"

// The byte-at-a-time Approx as first shipped, kept verbatim (renamed) as the
// reference the block-wise implementation must match id for id: the ids are a
// contract with cmd/modelsim.

// Byte classes of the reference splitter.
const (
	clsWord  = 0
	clsSpace = 1
	clsPunct = 2
)

// refClass maps a byte to clsWord, clsSpace or clsPunct.
var refClass = func() (t [256]uint8) {
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

// refPieceID hashes up to 8 packed piece bytes and the piece length to an id.
func refPieceID(packed uint64, n int) uint32 {
	h := (packed ^ uint64(n)<<59 ^ 0x5bd1e995) * hashMul
	h ^= h >> 29
	h *= hashMul
	return uint32(h >> idShift)
}

// refNext returns the end of the piece starting at i (i < len(text)) and the
// piece's bytes packed little-endian.
func refNext(text string, i int) (int, uint64) {
	c := text[i]
	switch refClass[c] {
	case clsWord:
		return refRunOf(text, i, 0, clsWord, maxWord)
	case clsSpace:
		if c == ' ' && i+1 < len(text) && refClass[text[i+1]] == clsWord {
			return refRunOf(text, i+1, ' ', clsWord, maxWord)
		}
		return refSpaceRun(text, i)
	default:
		return refRunOf(text, i, 0, clsPunct, maxPunct)
	}
}

// refRunOf packs up to max bytes of class cls starting at i after the already
// packed prefix (a leading space or 0).
func refRunOf(text string, i int, packed uint64, cls uint8, max int) (int, uint64) {
	shift := uint(0)
	if packed != 0 {
		shift = 8
	}
	end := i + max
	if end > len(text) {
		end = len(text)
	}
	j := i
	for ; j < end && refClass[text[j]] == cls; j++ {
		packed |= uint64(text[j]) << shift
		shift += 8
	}
	return j, packed
}

// refSpaceRun packs a whitespace run of up to maxSpace bytes. It stops before
// a space that directly precedes a word, which belongs to that word.
func refSpaceRun(text string, i int) (int, uint64) {
	var packed uint64
	end := i + maxSpace
	if end > len(text) {
		end = len(text)
	}
	j := i
	for ; j < end && refClass[text[j]] == clsSpace; j++ {
		if text[j] == ' ' && j > i && j+1 < len(text) && refClass[text[j+1]] == clsWord {
			break
		}
		packed |= uint64(text[j]) << (8 * uint(j-i))
	}
	return j, packed
}

// refApprox appends the approximate tokens of text to dst and returns it.
func refApprox(dst []uint32, text string) []uint32 {
	for i := 0; i < len(text); {
		j, packed := refNext(text, i)
		dst = append(dst, refPieceID(packed, j-i))
		i = j
	}
	return dst
}

// refCountApprox returns len(refApprox(nil, text)).
func refCountApprox(text string) int {
	n := 0
	for i := 0; i < len(text); n++ {
		i, _ = refNext(text, i)
	}
	return n
}

func BenchmarkRefApprox220KB(b *testing.B) {
	text := sampleText(220 << 10)
	dst := make([]uint32, 0, len(text))
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		dst = refApprox(dst[:0], text)
	}
}

func BenchmarkRefApprox32KB(b *testing.B) {
	text := prose8000()
	dst := make([]uint32, 0, len(text))
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		dst = refApprox(dst[:0], text)
	}
}

func BenchmarkRefCountApprox220KB(b *testing.B) {
	text := sampleText(220 << 10)
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		refCountApprox(text)
	}
}

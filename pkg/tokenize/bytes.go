package tokenize

import (
	"context"
	"encoding/binary"
	"slices"
	"unsafe"
)

// BytesPerToken is how many bytes of text make one Bytes token: about what
// a BPE tokenizer averages on English prose and on CJK text in UTF-8.
const BytesPerToken = 4

// Bytes is the tokenizer of the predicted path: every 4 bytes of text are
// one token whose id is those bytes (little-endian; a short tail is
// zero-padded), so a block of 16 tokens is 64 bytes of prompt. On the
// predicted path the index only ever holds the picker's own chains, so block
// boundaries need not be the engine's: byte blocks find the same shared
// prefixes as token blocks, and prompt length in tokens is estimated as
// bytes/4. What it saves is the decision path's largest cost after parsing:
// 32 KB tokenizes in a few microseconds instead of tens. It cannot match an
// engine's KV events (those hash real token ids). Safe for concurrent use;
// it never fails and ignores model.
type Bytes struct{}

// Tokenize appends ceil(len(text)/4) byte tokens to dst.
func (Bytes) Tokenize(_ context.Context, _ string, b []byte, dst []uint32) ([]uint32, error) {
	return BytesOf(dst, view(b)), nil
}

// BytesOf appends text's byte tokens to dst (Bytes.Tokenize on a string).
func BytesOf(dst []uint32, text string) []uint32 {
	n := len(text) / BytesPerToken
	base := len(dst)
	out := slices.Grow(dst, n+1)[:base+n]
	b := unsafe.Slice(unsafe.StringData(text), len(text)) // read only
	if littleEndian && n > 0 {
		// The words are the tokens: one memmove instead of a load per token.
		copy(unsafe.Slice((*byte)(unsafe.Pointer(&out[base])), n*BytesPerToken), b)
	} else {
		for i := range n {
			out[base+i] = binary.LittleEndian.Uint32(b[i*BytesPerToken:])
		}
	}
	if tail := b[n*BytesPerToken:]; len(tail) > 0 {
		var pad [BytesPerToken]byte
		copy(pad[:], tail)
		out = append(out, binary.LittleEndian.Uint32(pad[:]))
	}
	return out
}

var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// Exact is false: the ids are no model's.
func (Bytes) Exact() bool { return false }

// Name is "bytes".
func (Bytes) Name() string { return "bytes" }

// Local returns the tokenizer named name when it needs nothing but the text
// ("bytes", "approximate"); ok is false for other names (e.g. "remote").
func Local(name string) (t Tokenizer, ok bool) {
	switch name {
	case "bytes":
		return Bytes{}, true
	case "approximate":
		return Approximate{}, true
	}
	return nil, false
}

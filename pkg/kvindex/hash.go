// Package kvindex records which endpoint holds which prompt blocks and answers
// longest-prefix queries on the routing hot path. Blocks are identified by our
// own chained hash over token ids (BlockHashes), never by an engine's hash.
// Time is always passed in, so the same code runs in virtual time.
package kvindex

import (
	"encoding/binary"
	"unsafe"

	"github.com/cespare/xxhash/v2"
)

// seedDomain separates kvpick chain seeds from any other use of xxhash.
const seedDomain = "kvpick/kvindex/v1\x00"

// littleEndian reports whether token slices can be hashed in place: their
// in-memory bytes are then already the little-endian encoding.
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// Seed folds model, LoRA adapter and cache_salt into a chain's starting value,
// so different models, adapters and salts never share blocks. Each field is
// length-prefixed so ("ab","c") and ("a","bc") differ. Safe for concurrent use.
func Seed(model, lora, cacheSalt string) uint64 {
	var d xxhash.Digest
	d.Reset()
	_, _ = d.WriteString(seedDomain)
	for _, s := range [...]string{model, lora, cacheSalt} {
		var n [8]byte
		binary.LittleEndian.PutUint64(n[:], uint64(len(s)))
		_, _ = d.Write(n[:])
		_, _ = d.WriteString(s)
	}
	return d.Sum64()
}

// BlockHashes appends to dst the chained hashes of the full blocks of tokens:
// h_i = xxhash64(seed=h_{i-1}, little-endian bytes of tokens[i*B:(i+1)*B]),
// with h_{-1} = seed. A trailing partial block is not hashed; blockSize <= 0
// yields nothing. It allocates nothing when dst has capacity.
func BlockHashes(dst []uint64, seed uint64, tokens []uint32, blockSize int) []uint64 {
	if blockSize <= 0 {
		return dst
	}
	n := len(tokens) / blockSize
	if cap(dst)-len(dst) < n {
		grown := make([]uint64, len(dst), len(dst)+n)
		copy(grown, dst)
		dst = grown
	}
	h := seed
	for i := 0; i < n; i++ {
		h = hashBlock(h, tokens[i*blockSize:(i+1)*blockSize])
		dst = append(dst, h)
	}
	return dst
}

// hashBlock hashes one block of tokens seeded by the previous block's hash.
func hashBlock(prev uint64, block []uint32) uint64 {
	var d xxhash.Digest
	d.ResetWithSeed(prev)
	if littleEndian {
		_, _ = d.Write(unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(block))), 4*len(block)))
		return d.Sum64()
	}
	var buf [64]byte
	for len(block) > 0 {
		k := min(len(block), len(buf)/4)
		for j, t := range block[:k] {
			binary.LittleEndian.PutUint32(buf[4*j:], t)
		}
		_, _ = d.Write(buf[:4*k])
		block = block[k:]
	}
	return d.Sum64()
}

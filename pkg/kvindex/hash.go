// Package kvindex records which endpoint holds which prompt blocks and answers
// longest-prefix queries on the routing hot path. Blocks are identified by our
// own chained hash over token ids (BlockHashes), never by an engine's hash.
// Time is always passed in, so the same code runs in virtual time.
package kvindex

import (
	"encoding/binary"
	"slices"

	"github.com/cespare/xxhash/v2"
)

// seedDomain separates kvpick chain seeds from any other use of xxhash.
const seedDomain = "kvpick/kvindex/v1\x00"

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
// h_i = link(h_{i-1}, XXH64(little-endian bytes of tokens[i*B:(i+1)*B])),
// with h_{-1} = seed and link(p, x) = fmix64(p*prime1 + x), a bijection in
// each argument. Hashing blocks independently and linking them with a short
// mix lets the CPU overlap the blocks; only link is serial. A trailing
// partial block is not hashed; blockSize <= 0 yields nothing. It allocates
// nothing when dst has capacity. Safe for concurrent use.
func BlockHashes(dst []uint64, seed uint64, tokens []uint32, blockSize int) []uint64 {
	if blockSize <= 0 {
		return dst
	}
	n := len(tokens) / blockSize
	dst = slices.Grow(dst, n)
	h := seed
	for i := 0; i < n; i++ {
		h = link(h, xxh64Tokens(0, tokens[i*blockSize:(i+1)*blockSize]))
		dst = append(dst, h)
	}
	return dst
}

// link chains a block's content hash x onto its parent's hash p.
func link(p, x uint64) uint64 {
	h := p*prime1 + x
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
}

// ChainSeed is the one seeding rule of requests and engine events: a LoRA
// request's blocks are seeded with its adapter alone (vLLM folds the adapter
// name into every block hash; the request names the adapter as its model and
// an event names it as lora_name, while the base model is known to neither
// side alike), a base-model request's with its model; the cache salt always.
func ChainSeed(model, lora, cacheSalt string) uint64 {
	if lora != "" {
		model = ""
	}
	return Seed(model, lora, cacheSalt)
}

package engine

import "github.com/kvpick/kvpick/internal/mix"

// The engine's block hash: FNV-1a-style over 32-bit token words, chained
// through the parent hash and seeded by Config.HashSeed. It is deliberately
// unrelated to the picker's hash, as vLLM's is, so consumers of KV events must
// map blocks through their token ids.

const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

// mix64 is the splitmix64 finaliser.
func mix64(x uint64) uint64 { return mix.Splitmix64(x) }

// stringHash folds a name (the LoRA adapter) into a 64-bit value.
func stringHash(s string) uint64 {
	h := uint64(fnvOffset)
	for i := 0; i < len(s); i++ {
		h = (h ^ uint64(s[i])) * fnvPrime
	}
	return h
}

// blockHash hashes one full block given its parent's hash (0 for the first).
func blockHash(seed, parent, extra uint64, tokens []uint32) uint64 {
	h := mix64(seed^parent) ^ extra
	for _, t := range tokens {
		h = (h ^ uint64(t)) * fnvPrime
	}
	return mix64(h)
}

// tokensHash summarises a whole prompt for output-token generation.
func tokensHash(tokens []uint32) uint64 {
	h := uint64(fnvOffset)
	for _, t := range tokens {
		h = (h ^ uint64(t)) * fnvPrime
	}
	return h
}

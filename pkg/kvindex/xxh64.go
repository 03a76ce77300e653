package kvindex

import "math/bits"

// XXH64 constants (the published xxHash64 specification).
const (
	prime1 uint64 = 11400714785074694791
	prime2 uint64 = 14029467366897019727
	prime3 uint64 = 1609587929392839161
	prime4 uint64 = 9650029242287828579
	prime5 uint64 = 2870177450012600261
)

// xxh64Tokens is XXH64(seed, little-endian bytes of t), computed straight
// from the tokens: no byte view, no Digest state, and it inlines the round
// function. Equal to xxhash.NewWithSeed(seed) over the same bytes (tested).
func xxh64Tokens(seed uint64, t []uint32) uint64 {
	n := uint64(4 * len(t))
	var h uint64
	if len(t) >= 8 {
		v1, v2, v3, v4 := seed+prime1+prime2, seed+prime2, seed, seed-prime1
		for len(t) >= 8 {
			v1 = round(v1, pair(t[0], t[1]))
			v2 = round(v2, pair(t[2], t[3]))
			v3 = round(v3, pair(t[4], t[5]))
			v4 = round(v4, pair(t[6], t[7]))
			t = t[8:]
		}
		h = bits.RotateLeft64(v1, 1) + bits.RotateLeft64(v2, 7) + bits.RotateLeft64(v3, 12) + bits.RotateLeft64(v4, 18)
		h = mergeRound(mergeRound(mergeRound(mergeRound(h, v1), v2), v3), v4)
	} else {
		h = seed + prime5
	}
	h += n
	for ; len(t) >= 2; t = t[2:] {
		h ^= round(0, pair(t[0], t[1]))
		h = bits.RotateLeft64(h, 27)*prime1 + prime4
	}
	if len(t) == 1 {
		h ^= uint64(t[0]) * prime1
		h = bits.RotateLeft64(h, 23)*prime2 + prime3
	}
	h ^= h >> 33
	h *= prime2
	h ^= h >> 29
	h *= prime3
	h ^= h >> 32
	return h
}

// pair is the little-endian 8-byte word of two consecutive tokens.
func pair(a, b uint32) uint64 { return uint64(a) | uint64(b)<<32 }

func round(acc, input uint64) uint64 {
	return bits.RotateLeft64(acc+input*prime2, 31) * prime1
}

func mergeRound(acc, val uint64) uint64 {
	return (acc^round(0, val))*prime1 + prime4
}

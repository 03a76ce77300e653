package kvindex

import (
	"encoding/binary"
	"testing"

	"github.com/cespare/xxhash/v2"
)

func seq(n int, from uint32) []uint32 {
	t := make([]uint32, n)
	for i := range t {
		t[i] = from + uint32(i)
	}
	return t
}

// refChain is the documented formula, written the slow portable way.
func refChain(seed uint64, tokens []uint32, b int) []uint64 {
	var out []uint64
	h := seed
	for i := 0; i+b <= len(tokens); i += b {
		buf := make([]byte, 4*b)
		for j, t := range tokens[i : i+b] {
			binary.LittleEndian.PutUint32(buf[4*j:], t)
		}
		x := xxhash.Sum64(buf)
		h = fmix64(h*11400714785074694791 + x)
		out = append(out, h)
	}
	return out
}

// fmix64 is MurmurHash3's 64-bit finalizer, written out independently.
func fmix64(h uint64) uint64 {
	h = (h ^ h>>33) * 0xff51afd7ed558ccd
	h = (h ^ h>>33) * 0xc4ceb9fe1a85ec53
	return h ^ h>>33
}

func TestBlockHashes(t *testing.T) {
	seed := Seed("m", "", "")
	tests := []struct {
		name      string
		tokens    []uint32
		blockSize int
		want      int
	}{
		{"empty", nil, 16, 0},
		{"partial only", seq(15, 0), 16, 0},
		{"one full", seq(16, 0), 16, 1},
		{"trailing partial dropped", seq(50, 7), 16, 3},
		{"block of one", seq(5, 0), 1, 5},
		{"odd block", seq(100, 3), 7, 14},
		{"long block", seq(200, 3), 100, 2},
		{"zero block size", seq(16, 0), 0, 0},
		{"negative block size", seq(16, 0), -4, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := BlockHashes(nil, seed, tc.tokens, tc.blockSize)
			if len(got) != tc.want {
				t.Fatalf("len = %d, want %d", len(got), tc.want)
			}
			if tc.blockSize > 0 {
				ref := refChain(seed, tc.tokens, tc.blockSize)
				for i := range got {
					if got[i] != ref[i] {
						t.Fatalf("block %d: %#x, reference %#x", i, got[i], ref[i])
					}
				}
			}
		})
	}
}

func TestBlockHashesChainProperties(t *testing.T) {
	seed := Seed("m", "", "")
	full := BlockHashes(nil, seed, seq(64, 0), 16)
	// A shorter prompt with the same prefix yields the same leading hashes.
	short := BlockHashes(nil, seed, seq(40, 0), 16)
	for i := range short {
		if short[i] != full[i] {
			t.Fatalf("prefix block %d differs", i)
		}
	}
	// Continuing from a block's hash equals hashing the whole sequence.
	cont := BlockHashes(nil, full[1], seq(64, 0)[32:], 16)
	if cont[0] != full[2] || cont[1] != full[3] {
		t.Fatal("continuation from parent differs from the full chain")
	}
	// A change in block 0 changes every later block.
	other := seq(64, 0)
	other[3]++
	changed := BlockHashes(nil, seed, other, 16)
	for i := range changed {
		if changed[i] == full[i] {
			t.Fatalf("block %d unchanged after an edit in block 0", i)
		}
	}
	// Appends after existing content.
	pre := BlockHashes([]uint64{42}, seed, seq(32, 0), 16)
	if len(pre) != 3 || pre[0] != 42 || pre[1] != full[0] {
		t.Fatalf("append semantics broken: %v", pre)
	}
}

func TestBlockHashesNoAllocs(t *testing.T) {
	tokens, dst := seq(1024, 0), make([]uint64, 0, 64)
	if n := testing.AllocsPerRun(100, func() { dst = BlockHashes(dst[:0], 1, tokens, 16) }); n != 0 {
		t.Fatalf("allocs = %v, want 0", n)
	}
}

func TestSeedSeparates(t *testing.T) {
	seeds := map[uint64]string{}
	for _, c := range [][3]string{
		{"llama", "", ""}, {"llama2", "", ""}, {"llama", "sql-lora", ""}, {"llama", "", "salt"},
		{"llama", "sql-lora", "salt"}, {"ab", "c", ""}, {"a", "bc", ""}, {"", "abc", ""}, {"", "", "abc"},
	} {
		s := Seed(c[0], c[1], c[2])
		if prev, dup := seeds[s]; dup {
			t.Fatalf("Seed%v collides with %s", c, prev)
		}
		seeds[s] = c[0] + "|" + c[1] + "|" + c[2]
	}
	if Seed("m", "l", "s") != Seed("m", "l", "s") {
		t.Fatal("Seed is not deterministic")
	}
}

func TestXXH64TokensMatchesXXHash(t *testing.T) {
	for n := 0; n <= 70; n++ {
		for _, seed := range []uint64{0, 1, 0xdeadbeefcafe, ^uint64(0)} {
			tokens := seq(n, uint32(n)*977)
			buf := make([]byte, 4*n)
			for j, tok := range tokens {
				binary.LittleEndian.PutUint32(buf[4*j:], tok)
			}
			d := xxhash.NewWithSeed(seed)
			_, _ = d.Write(buf)
			if got, want := xxh64Tokens(seed, tokens), d.Sum64(); got != want {
				t.Fatalf("n=%d seed=%#x: %#x, xxhash %#x", n, seed, got, want)
			}
			if seed == 0 && xxh64Tokens(0, tokens) != xxhash.Sum64(buf) {
				t.Fatalf("n=%d: differs from xxhash.Sum64", n)
			}
		}
	}
}

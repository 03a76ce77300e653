package kvindex

import (
	"errors"
	"maps"
	"testing"
)

// TestStoredIdentity: groups, tiers and extra keys are separate identities;
// removing in one never deletes another, and only group 0 on the GPU tier
// answers a plain request chain.
func TestStoredIdentity(t *testing.T) {
	seed := Seed("m", "", "")
	tokens := seq(8, 0)
	chain := BlockHashes(nil, seed, tokens, 4)
	gpu := Stored{Seed: seed, EngineHashes: []uint64{1, 2}, Tokens: tokens, BlockSize: 4}
	cases := []struct {
		name   string
		other  Stored
		remove func(ix *Index)
	}{
		{"sliding-window group removal keeps full attention", with(gpu, func(s *Stored) { s.Group = 1 }),
			func(ix *Index) { ix.ApplyRemovedBlocks("a", 1, TierGPU, []uint64{1, 2}) }},
		{"cpu tier removal keeps the gpu copy", with(gpu, func(s *Stored) { s.Tier = TierHost }),
			func(ix *Index) { ix.ApplyRemovedBlocks("a", 0, TierHost, []uint64{1, 2}) }},
		{"disk tier removal keeps the gpu copy", with(gpu, func(s *Stored) { s.Tier = TierDisk }),
			func(ix *Index) { ix.ApplyRemovedBlocks("a", 0, TierDisk, []uint64{1, 2}) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ix := New(Options{})
			for _, s := range []Stored{gpu, tc.other} {
				if err := ix.ApplyStoredBlocks("a", s, t0); err != nil {
					t.Fatal(err)
				}
			}
			if st := ix.Stats(); st.Entries != 4 {
				t.Fatalf("entries = %d, want 4 (two namespaces of two blocks)", st.Entries)
			}
			tc.remove(ix)
			if got := matchMap(ix, chain, t0); !maps.Equal(got, map[string]int{"a": 2}) {
				t.Fatalf("after removal Match = %v, want a:2", got)
			}
			if st := ix.Stats(); st.Entries != 2 {
				t.Fatalf("entries = %d after removal, want 2", st.Entries)
			}
		})
	}
}

func with(s Stored, f func(*Stored)) Stored { f(&s); return s }

func TestStoredTierSeedMatches(t *testing.T) {
	ix := New(Options{})
	seed := Seed("m", "", "")
	tokens := seq(12, 0)
	if err := ix.ApplyStoredBlocks("a", Stored{Seed: seed, EngineHashes: []uint64{1, 2, 3}, Tokens: tokens, BlockSize: 4, Tier: TierHost}, t0); err != nil {
		t.Fatal(err)
	}
	if got := matchMap(ix, BlockHashes(nil, seed, tokens, 4), t0); len(got) != 0 {
		t.Fatalf("host-tier blocks answered a GPU lookup: %v", got)
	}
	host := TierChain(nil, BlockHashes(nil, seed, tokens, 4), TierHost)
	if got := matchMap(ix, host, t0); !maps.Equal(got, map[string]int{"a": 3}) {
		t.Fatalf("host chain Match = %v, want a:3", got)
	}
}

func TestStoredExtraKeys(t *testing.T) {
	ix := New(Options{})
	seed := Seed("m", "", "")
	tokens := seq(8, 0)
	keyed := Stored{Seed: seed, EngineHashes: []uint64{1, 2}, Tokens: tokens, BlockSize: 4, ExtraKeys: []uint64{0, 77}}
	if err := ix.ApplyStoredBlocks("a", keyed, t0); err != nil {
		t.Fatal(err)
	}
	// Block 0 has no key, so it is the plain block; block 1 is keyed.
	if got := matchMap(ix, BlockHashes(nil, seed, tokens, 4), t0); !maps.Equal(got, map[string]int{"a": 1}) {
		t.Fatalf("Match = %v, want a:1 (the keyed block differs)", got)
	}
	bad := with(keyed, func(s *Stored) { s.ExtraKeys = []uint64{1} })
	if err := ix.ApplyStoredBlocks("a", bad, t0); err == nil {
		t.Fatal("extra keys of the wrong length accepted")
	}
}

// TestStoredSparse: a sliding-window store lists only the blocks it kept;
// they are the last of the token range, and the next event chains on them.
func TestStoredSparse(t *testing.T) {
	ix := New(Options{})
	seed := Seed("m", "", "")
	tokens := seq(16, 0)
	chain := BlockHashes(nil, seed, tokens, 4)
	if err := ix.ApplyStoredBlocks("a", Stored{Seed: seed, EngineHashes: []uint64{30, 40}, Tokens: tokens[:16], BlockSize: 4}, t0); err != nil {
		t.Fatal(err)
	}
	if got := matchMap(ix, chain, t0); len(got) != 0 {
		t.Fatalf("Match = %v: the leading (null) blocks are not held", got)
	}
	if got := matchMap(ix, chain[2:], t0); !maps.Equal(got, map[string]int{"a": 2}) {
		t.Fatalf("Match of the kept blocks = %v, want a:2", got)
	}
	next := seq(4, 100)
	p := uint64(40)
	if err := ix.ApplyStoredBlocks("a", Stored{Seed: seed, Parent: &p, EngineHashes: []uint64{50}, Tokens: next, BlockSize: 4}, t0); err != nil {
		t.Fatalf("child of the sparse store: %v", err)
	}
	want := BlockHashes(nil, chain[3], next, 4)
	if got := matchMap(ix, want, t0); !maps.Equal(got, map[string]int{"a": 1}) {
		t.Fatalf("child Match = %v", got)
	}
	g1 := uint64(40)
	err := ix.ApplyStoredBlocks("a", Stored{Seed: seed, Parent: &g1, EngineHashes: []uint64{60}, Tokens: next, BlockSize: 4, Group: 1}, t0)
	if !errors.Is(err, ErrUnknownParent) {
		t.Fatalf("a parent from another group resolved: %v", err)
	}
}

func TestTierOf(t *testing.T) {
	for medium, want := range map[string]Tier{"": TierGPU, "GPU": TierGPU, "CPU": TierHost, "CPU_PINNED": TierHost,
		"CPU_TIER2": TierHost, "DISK": TierDisk, "EXTERNAL": TierExternal, "nvme?": TierExternal} {
		if got := TierOf(medium); got != want {
			t.Errorf("TierOf(%q) = %v, want %v", medium, got, want)
		}
	}
}

// TestMatchCredited: 2 blocks on GPU, 6 on host, 10 on disk at Dynamo's
// weights credit 2 + 0.75*4 + 0.25*4 = 6 blocks.
func TestMatchCredited(t *testing.T) {
	ix := New(Options{})
	seed := Seed("m", "", "")
	tokens := seq(40, 0)
	chain := BlockHashes(nil, seed, tokens, 4)
	store := func(n int, tier Tier) {
		hs := make([]uint64, n)
		for i := range hs {
			hs[i] = uint64(i + 1)
		}
		if err := ix.ApplyStoredBlocks("a", Stored{Seed: seed, EngineHashes: hs, Tokens: tokens[:4*n], BlockSize: 4, Tier: tier}, t0); err != nil {
			t.Fatal(err)
		}
	}
	store(2, TierGPU)
	if got := ix.MatchCredited(chain, t0, TierWeights{Host: 0.75, Disk: 0.25}, nil); len(got) != 1 || got[0].Blocks != 2 {
		t.Fatalf("GPU only: %v", got)
	}
	store(6, TierHost)
	store(10, TierDisk)
	w := TierWeights{Host: 0.75, Disk: 0.25}
	if got := ix.MatchCredited(chain, t0, w, nil); len(got) != 1 || got[0] != (Overlap{"a", 6}) {
		t.Fatalf("MatchCredited = %v, want a:6", got)
	}
	if got := ix.MatchCredited(chain, t0, TierWeights{}, nil); got[0].Blocks != 2 {
		t.Fatalf("zero weights credited slower tiers: %v", got)
	}
	if got := ix.Match(chain, t0, nil); got[0].Blocks != 2 {
		t.Fatalf("Match counts slower tiers: %v", got)
	}
}

// Engine hashes that alias live blocks (the same tokens re-stored under new
// hashes, as after an engine restart with another hash seed) cannot be
// trimmed; the index must not rescan its whole engine map on every event.
func TestAliasedEngineHashesTrimAmortised(t *testing.T) {
	ix := New(Options{})
	seed := Seed("m", "", "")
	tokens := seq(64, 0)
	for i := 0; i < 400; i++ {
		hs := make([]uint64, 16)
		for j := range hs {
			hs[j] = uint64(i*16 + j + 1)
		}
		if err := ix.ApplyStoredBlocks("a", Stored{Seed: seed, EngineHashes: hs, Tokens: tokens, BlockSize: 4}, t0); err != nil {
			t.Fatal(err)
		}
	}
	ep := ix.reg.get("a")
	trims := 0
	for i := 0; i < 2000; i++ {
		before := ep.engineTrimmed
		_ = ix.ApplyStoredBlocks("a", Stored{Seed: seed, EngineHashes: []uint64{uint64(1e6 + i)}, Tokens: tokens[:4], BlockSize: 4}, t0)
		if ep.engineTrimmed != before {
			trims++
		}
	}
	if trims > 2 {
		t.Fatalf("%d full trims in 2000 events over a map of %d aliases: not amortised", trims, ep.engine.len())
	}
	if got := matchMap(ix, BlockHashes(nil, seed, tokens, 4), t0); got["a"] != 16 {
		t.Fatalf("Match = %v, want a:16", got)
	}
}

// An endpoint's capacity (its GPU blocks) bounds its view only while it
// reports one tier and group: CPU copies must not push GPU entries out.
func TestCapacityWithTiers(t *testing.T) {
	ix := New(Options{})
	ix.SetCapacity("a", 4)
	seed := Seed("m", "", "")
	tokens := seq(16, 0)
	for _, tier := range []Tier{TierGPU, TierHost} {
		if err := ix.ApplyStoredBlocks("a", Stored{Seed: seed, EngineHashes: []uint64{1, 2, 3, 4}, Tokens: tokens, BlockSize: 4, Tier: tier}, t0); err != nil {
			t.Fatal(err)
		}
	}
	if st := ix.Stats(); st.Entries != 8 {
		t.Fatalf("entries = %d, want 8 (4 GPU + 4 host, over a 4-block capacity)", st.Entries)
	}
	if got := matchMap(ix, BlockHashes(nil, seed, tokens, 4), t0); got["a"] != 4 {
		t.Fatalf("GPU Match = %v, want a:4", got)
	}
}

// MayMatch is false exactly when MatchCredited could name no endpoint, per
// tier and weight; true may still round down to nothing.
func TestMayMatch(t *testing.T) {
	seed := Seed("m", "", "")
	tokens := seq(40, 0)
	chain := BlockHashes(nil, seed, tokens, 4)
	other := BlockHashes(nil, Seed("other", "", ""), tokens, 4)
	for _, c := range []struct {
		name   string
		tier   Tier
		blocks int
		w      TierWeights
		chain  []uint64
		want   bool
	}{
		{"nothing stored", TierGPU, 0, TierWeights{}, chain, false},
		{"first block on GPU", TierGPU, 1, TierWeights{}, chain, true},
		{"another prompt", TierGPU, 4, TierWeights{}, other, false},
		{"empty chain", TierGPU, 4, TierWeights{}, nil, false},
		{"host, credited", TierHost, 4, TierWeights{Host: 0.75}, chain, true},
		{"host, not credited", TierHost, 4, TierWeights{Disk: 0.25}, chain, false},
		{"disk, credited", TierDisk, 4, TierWeights{Disk: 0.25}, chain, true},
		{"external counts as disk", TierExternal, 4, TierWeights{Disk: 0.25}, chain, true},
		{"host one block at a weight that rounds down", TierHost, 1, TierWeights{Host: 0.5}, chain, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			ix := New(Options{})
			if c.blocks > 0 {
				hs := make([]uint64, c.blocks)
				for i := range hs {
					hs[i] = uint64(i + 1)
				}
				if err := ix.ApplyStoredBlocks("a", Stored{Seed: seed, EngineHashes: hs, Tokens: tokens[:4*c.blocks], BlockSize: 4, Tier: c.tier}, t0); err != nil {
					t.Fatal(err)
				}
			}
			got := ix.MayMatch(c.chain, c.w)
			if got != c.want {
				t.Fatalf("MayMatch = %v, want %v", got, c.want)
			}
			if !got && len(ix.MatchCredited(c.chain, t0, c.w, nil)) > 0 {
				t.Fatalf("MayMatch false but MatchCredited = %v", ix.MatchCredited(c.chain, t0, c.w, nil))
			}
		})
	}
}

package kvindex

import (
	"errors"
	"fmt"
	"maps"
	"testing"
	"time"
)

var t0 = time.Unix(1_000_000, 0)

// chainOf returns n distinct fake block hashes starting at base.
func chainOf(base uint64, n int) []uint64 {
	c := make([]uint64, n)
	for i := range c {
		c[i] = base + uint64(i)*0x9e3779b97f4a7c15
	}
	return c
}

func pick(c []uint64, idx ...int) []uint64 {
	out := make([]uint64, len(idx))
	for i, j := range idx {
		out[i] = c[j]
	}
	return out
}

func matchMap(ix *Index, chain []uint64, now time.Time) map[string]int {
	m := map[string]int{}
	for _, o := range ix.Match(chain, now, nil) {
		if _, dup := m[o.Endpoint]; dup {
			panic("duplicate endpoint in Match result: " + o.Endpoint)
		}
		m[o.Endpoint] = o.Blocks
	}
	return m
}

func TestMatchLongestPrefix(t *testing.T) {
	c := chainOf(1, 10)
	type rec struct {
		ep     string
		blocks []uint64
	}
	tests := []struct {
		name  string
		recs  []rec
		query []uint64
		want  map[string]int
	}{
		{"empty index", nil, c, map[string]int{}},
		{"empty query", []rec{{"a", c}}, nil, map[string]int{}},
		{"full", []rec{{"a", c}}, c, map[string]int{"a": 10}},
		{"query shorter", []rec{{"a", c}}, c[:4], map[string]int{"a": 4}},
		{"partial", []rec{{"a", c[:3]}}, c, map[string]int{"a": 3}},
		{"no first block", []rec{{"a", c[1:]}}, c, map[string]int{}},
		{"hole breaks prefix", []rec{{"a", pick(c, 0, 1, 3, 4, 5)}}, c, map[string]int{"a": 2}},
		{"several", []rec{{"a", c}, {"b", c[:3]}, {"c", c[1:5]}, {"d", pick(c, 0, 1, 3)}, {"e", c[:1]}},
			c, map[string]int{"a": 10, "b": 3, "d": 2, "e": 1}},
		{"diverging chains", []rec{{"a", c[:5]}, {"b", append(c[:2:2], chainOf(77, 5)...)}},
			c, map[string]int{"a": 5, "b": 2}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ix := New(Options{})
			for _, r := range tc.recs {
				ix.RecordPredicted(r.ep, r.blocks, t0)
			}
			if got := matchMap(ix, tc.query, t0); !maps.Equal(got, tc.want) {
				t.Fatalf("Match = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestMatchManyEndpoints(t *testing.T) {
	// Ids beyond one and two bitset words, each with a different prefix length.
	for _, n := range []int{63, 64, 65, 130, 300} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			ix, c, want := New(Options{}), chainOf(5, n+1), map[string]int{}
			for i := 0; i < n; i++ {
				ep := fmt.Sprintf("10.0.0.%d:8000", i)
				ix.RecordPredicted(ep, c[:i+1], t0)
				want[ep] = i + 1
			}
			if got := matchMap(ix, c, t0); !maps.Equal(got, want) {
				t.Fatalf("Match = %v, want %v", got, want)
			}
		})
	}
}

func TestSeedsSeparateIndexEntries(t *testing.T) {
	tokens := seq(64, 0)
	ix := New(Options{})
	ix.RecordPredicted("base", BlockHashes(nil, Seed("m", "", ""), tokens, 16), t0)
	ix.RecordPredicted("lora", BlockHashes(nil, Seed("m", "sql", ""), tokens, 16), t0)
	ix.RecordPredicted("salt", BlockHashes(nil, Seed("m", "", "s1"), tokens, 16), t0)
	tests := []struct{ model, lora, salt, want string }{
		{"m", "", "", "base"}, {"m", "sql", "", "lora"}, {"m", "", "s1", "salt"},
		{"m", "", "s2", ""}, {"other", "", "", ""}, {"m", "sql", "s1", ""},
	}
	for _, tc := range tests {
		got := matchMap(ix, BlockHashes(nil, Seed(tc.model, tc.lora, tc.salt), tokens, 16), t0)
		want := map[string]int{}
		if tc.want != "" {
			want[tc.want] = 4
		}
		if !maps.Equal(got, want) {
			t.Errorf("%v: Match = %v, want %v", tc, got, want)
		}
	}
}

func TestPredictedTTL(t *testing.T) {
	ttl, knownTTL := 120*time.Second, 600*time.Second
	c := chainOf(9, 4)
	tests := []struct {
		name   string
		setup  func(ix *Index)
		at     time.Duration
		want   map[string]int
		expire int // Expire(t0+at) count
	}{
		{"live just before ttl", func(ix *Index) { ix.RecordPredicted("a", c, t0) }, ttl - 1, map[string]int{"a": 4}, 0},
		{"expired at ttl", func(ix *Index) { ix.RecordPredicted("a", c, t0) }, ttl, map[string]int{}, 4},
		{"refresh extends", func(ix *Index) {
			ix.RecordPredicted("a", c, t0)
			ix.RecordPredicted("a", c[:2], t0.Add(60*time.Second))
		}, ttl + time.Second, map[string]int{"a": 2}, 2},
		{"per holder expiry", func(ix *Index) {
			ix.RecordPredicted("a", c, t0)
			ix.RecordPredicted("b", c, t0.Add(60*time.Second))
			ix.RecordPredicted("c", c[:1], t0)
		}, ttl + time.Second, map[string]int{"b": 4}, 5},
		// Where the engine's capacity is known, claims last the longer TTL.
		{"known capacity: held past ttl", func(ix *Index) {
			ix.SetCapacity("a", 100)
			ix.RecordPredicted("a", c, t0)
		}, ttl + time.Second, map[string]int{"a": 4}, 0},
		{"known capacity: expired at its own ttl", func(ix *Index) {
			ix.SetCapacity("a", 100)
			ix.RecordPredicted("a", c, t0)
		}, knownTTL, map[string]int{}, 4},
		{"known capacity per endpoint", func(ix *Index) {
			ix.SetCapacity("a", 100)
			ix.RecordPredicted("a", c, t0)
			ix.RecordPredicted("b", c, t0)
		}, ttl + time.Second, map[string]int{"a": 4}, 4},
		{"capacity reset to unknown", func(ix *Index) {
			ix.SetCapacity("a", 100)
			ix.SetCapacity("a", 0)
			ix.RecordPredicted("a", c, t0)
		}, ttl, map[string]int{}, 4},
	}
	for _, tc := range tests {
		for _, explicit := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/explicit=%v", tc.name, explicit), func(t *testing.T) {
				ix := New(Options{PredictedTTL: ttl, PredictedTTLKnownCapacity: knownTTL})
				tc.setup(ix)
				now := t0.Add(tc.at)
				if explicit {
					if n := ix.Expire(now); n != tc.expire {
						t.Fatalf("Expire = %d, want %d", n, tc.expire)
					}
				}
				// Without Expire, Match drops due claims itself.
				if got := matchMap(ix, c, now); !maps.Equal(got, tc.want) {
					t.Fatalf("Match = %v, want %v", got, tc.want)
				}
				if st := ix.Stats(); st.Expired != uint64(tc.expire) {
					t.Fatalf("Stats.Expired = %d, want %d", st.Expired, tc.expire)
				}
				if n := ix.Expire(now); n != 0 {
					t.Fatalf("second Expire = %d", n)
				}
			})
		}
	}
}

func TestRecordExpiresOwnEndpointLazily(t *testing.T) {
	ix := New(Options{PredictedTTL: time.Minute})
	ix.RecordPredicted("a", chainOf(1, 10), t0)
	ix.RecordPredicted("a", chainOf(1000, 2), t0.Add(2*time.Minute))
	if st := ix.Stats(); st.Entries != 2 || st.Expired != 10 {
		t.Fatalf("entries=%d expired=%d, want 2 and 10", st.Entries, st.Expired)
	}
}

func TestLRUEviction(t *testing.T) {
	a, b, c := chainOf(100, 5), chainOf(200, 5), chainOf(300, 5)
	tests := []struct {
		name    string
		opts    Options
		cap     int // SetCapacity when > 0
		records [][]uint64
		want    map[string]int // query chain name -> blocks
		entries int
		evicted uint64
	}{
		{"under capacity", Options{MaxBlocksPerEndpoint: 10}, 0, [][]uint64{a, b}, map[string]int{"a": 5, "b": 5}, 10, 0},
		// 15 > 10: prune to 8, oldest first (a), and within b its tail first.
		{"prune to 80%", Options{MaxBlocksPerEndpoint: 10, PruneTarget: 0.8}, 0, [][]uint64{a, b, c},
			map[string]int{"a": 0, "b": 3, "c": 5}, 8, 7},
		// a was refreshed after b, so b goes first, then a's tail.
		{"refresh protects", Options{MaxBlocksPerEndpoint: 10, PruneTarget: 0.8}, 0, [][]uint64{a, b, a, c},
			map[string]int{"a": 3, "b": 0, "c": 5}, 8, 7},
		{"prune target", Options{MaxBlocksPerEndpoint: 10, PruneTarget: 0.5}, 0, [][]uint64{a, b, c},
			map[string]int{"a": 0, "b": 0, "c": 5}, 5, 10},
		{"capacity overrides", Options{MaxBlocksPerEndpoint: 100, PruneTarget: 0.8}, 5, [][]uint64{a, b},
			map[string]int{"a": 0, "b": 4}, 4, 6},
	}
	chains := map[string][]uint64{"a": a, "b": b, "c": c}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ix := New(tc.opts)
			if tc.cap > 0 {
				ix.SetCapacity("e", tc.cap)
			}
			for _, r := range tc.records {
				ix.RecordPredicted("e", r, t0)
			}
			for name, want := range tc.want {
				if got := matchMap(ix, chains[name], t0)["e"]; got != want {
					t.Errorf("chain %s: %d blocks, want %d", name, got, want)
				}
			}
			st := ix.Stats()
			if st.Entries != tc.entries || st.UniqueBlocks != tc.entries {
				t.Errorf("entries=%d unique=%d, want %d", st.Entries, st.UniqueBlocks, tc.entries)
			}
			if st.Evictions != tc.evicted {
				t.Errorf("evictions=%d, want %d", st.Evictions, tc.evicted)
			}
		})
	}
}

func TestSetCapacityPrunesAtOnce(t *testing.T) {
	ix := New(Options{})
	ix.RecordPredicted("e", chainOf(1, 100), t0)
	ix.SetCapacity("e", 50)
	if st := ix.Stats(); st.Entries != 50 || st.Endpoints[0].Capacity != 50 {
		t.Fatalf("entries=%d capacity=%d, want 50 and 50 (the default prunes only the excess)", st.Entries, st.Endpoints[0].Capacity)
	}
	if got := matchMap(ix, chainOf(1, 100), t0)["e"]; got != 50 {
		t.Fatalf("prefix after prune = %d, want 50 (tail evicted first)", got)
	}
}

func TestRemoveEndpoint(t *testing.T) {
	c := chainOf(1, 6)
	ix := New(Options{})
	ix.RecordPredicted("a", c, t0)
	ix.RecordPredicted("b", c[:3], t0)
	ix.RemoveEndpoint("a")
	ix.RemoveEndpoint("nobody")
	if got := matchMap(ix, c, t0); !maps.Equal(got, map[string]int{"b": 3}) {
		t.Fatalf("after removal Match = %v", got)
	}
	// The freed id is reused; the newcomer must not inherit a's blocks.
	ix.RecordPredicted("c", c[:1], t0)
	if got := matchMap(ix, c, t0); !maps.Equal(got, map[string]int{"b": 3, "c": 1}) {
		t.Fatalf("after reuse Match = %v", got)
	}
	if st := ix.Stats(); st.Entries != 4 || st.UniqueBlocks != 3 || len(st.Endpoints) != 2 {
		t.Fatalf("stats = %+v", st)
	}
}

func TestOptionsDefaults(t *testing.T) {
	o := Options{PruneTarget: 1.5}.withDefaults()
	if o.MaxBlocksPerEndpoint != 1<<20 || o.PruneTarget != 1 || o.PredictedTTL != 120*time.Second || o.PredictedTTLKnownCapacity != 600*time.Second {
		t.Fatalf("defaults = %+v", o)
	}
}

func TestErrUnknownParentIsSentinel(t *testing.T) {
	ix := New(Options{})
	p := uint64(1)
	err := ix.ApplyStored("a", 0, &p, []uint64{2}, seq(4, 0), 4, t0)
	if !errors.Is(err, ErrUnknownParent) {
		t.Fatalf("err = %v", err)
	}
}

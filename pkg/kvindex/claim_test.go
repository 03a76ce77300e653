package kvindex

import (
	"maps"
	"testing"
	"time"
)

// TestRetract: a claim takes back only the blocks it added and nothing
// touched since; what was held before it and what a later claim or an
// engine event touched stays.
func TestRetract(t *testing.T) {
	c := chainOf(7, 10)
	seed := Seed("m", "", "")
	tokens := seq(40, 0)
	ev := BlockHashes(nil, seed, tokens, 4) // 10 blocks an engine reports
	tests := []struct {
		name    string
		chain   []uint64
		before  func(ix *Index) // state before the claim
		after   func(ix *Index) // what happens between the claim and Retract
		want    map[string]int  // Match of chain afterwards
		dropped int
	}{
		{"a new chain goes whole", c, nil, nil, map[string]int{}, 10},
		{"a prefix held before stays", c,
			func(ix *Index) { ix.RecordPredicted("a", c[:4], t0) }, nil, map[string]int{"a": 4}, 6},
		{"a later claim keeps what it touched", c,
			nil, func(ix *Index) { ix.RecordPredicted("a", c[:6], t0) }, map[string]int{"a": 6}, 4},
		{"another endpoint's claim is not touched", c,
			nil, func(ix *Index) { ix.RecordPredicted("b", c, t0) }, map[string]int{"b": 10}, 10},
		{"an engine event keeps its blocks", ev,
			nil, func(ix *Index) {
				if err := ix.ApplyStored("a", seed, nil, []uint64{1, 2, 3}, tokens[:12], 4, t0); err != nil {
					t.Fatal(err)
				}
			}, map[string]int{"a": 3}, 7},
		{"a chain held whole claims nothing", c,
			func(ix *Index) { ix.RecordPredicted("a", c, t0) }, nil, map[string]int{"a": 10}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ix := New(Options{PredictedTTL: time.Minute})
			if tt.before != nil {
				tt.before(ix)
			}
			cl := ix.ClaimPredicted("a", tt.chain, t0.Add(time.Second))
			if got := matchMap(ix, tt.chain, t0.Add(time.Second)); got["a"] != 10 {
				t.Fatalf("after the claim a holds %d blocks, want 10", got["a"])
			}
			if tt.after != nil {
				tt.after(ix)
			}
			if n := ix.Retract(cl); n != tt.dropped {
				t.Errorf("Retract dropped %d, want %d", n, tt.dropped)
			}
			if got := matchMap(ix, tt.chain, t0.Add(time.Second)); !maps.Equal(got, tt.want) {
				t.Errorf("Match after Retract = %v, want %v", got, tt.want)
			}
			if st := ix.Stats(); st.Retracted != uint64(tt.dropped) || st.Entries != st.Observed+st.Predicted {
				t.Errorf("stats = %+v, want Retracted %d and consistent counts", st, tt.dropped)
			}
			if n := ix.Retract(Claim{}); n != 0 {
				t.Errorf("the zero claim dropped %d", n)
			}
		})
	}
}

// TestRetractAfterRemoveEndpoint: a claim on an endpoint removed since
// drops nothing, and nothing of a new endpoint of the same name.
func TestRetractAfterRemoveEndpoint(t *testing.T) {
	c := chainOf(3, 5)
	ix := New(Options{})
	cl := ix.ClaimPredicted("a", c, t0)
	ix.RemoveEndpoint("a")
	ix.RecordPredicted("a", c, t0)
	if n := ix.Retract(cl); n != 0 {
		t.Fatalf("Retract dropped %d after the endpoint was removed", n)
	}
	if got := matchMap(ix, c, t0); got["a"] != 5 {
		t.Fatalf("Match = %v, want a: 5", got)
	}
}

// TestClaimUnreported: the events path's bridge claim covers the whole chain:
// a predicted prefix held before it goes too (only events keep blocks after
// it), while reported blocks and blocks a later claim touched stay.
func TestClaimUnreported(t *testing.T) {
	seed := Seed("m", "", "")
	tokens := seq(40, 0)
	ev := BlockHashes(nil, seed, tokens, 4) // 10 blocks an engine reports
	report := func(ix *Index, n int) {
		if err := ix.ApplyStored("a", seed, nil, []uint64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}[:n], tokens[:4*n], 4, t0); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name    string
		before  func(ix *Index)
		after   func(ix *Index)
		want    int // blocks of the chain a holds afterwards
		dropped int
	}{
		{"nothing reported: all of it goes", nil, nil, 0, 10},
		{"a predicted prefix held before goes too", func(ix *Index) { ix.RecordPredicted("a", ev[:4], t0) }, nil, 0, 10},
		{"a reported prefix stays", func(ix *Index) { report(ix, 4) }, nil, 4, 6},
		{"blocks reported meanwhile stay", nil, func(ix *Index) { report(ix, 7) }, 7, 3},
		{"a later claim keeps what it touched", nil, func(ix *Index) { ix.ClaimUnreported("a", ev[:5], t0) }, 5, 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ix := New(Options{PredictedTTL: time.Minute})
			if tt.before != nil {
				tt.before(ix)
			}
			cl := ix.ClaimUnreported("a", ev, t0.Add(time.Second))
			if got := matchMap(ix, ev, t0.Add(time.Second)); got["a"] != 10 {
				t.Fatalf("after the claim a holds %d blocks, want 10", got["a"])
			}
			if tt.after != nil {
				tt.after(ix)
			}
			if n := ix.Retract(cl); n != tt.dropped {
				t.Errorf("Retract dropped %d, want %d", n, tt.dropped)
			}
			if got := matchMap(ix, ev, t0.Add(time.Second))["a"]; got != tt.want {
				t.Errorf("a holds %d blocks after Retract, want %d", got, tt.want)
			}
			for i, h := range ev {
				if want := i < tt.want && tt.name != "a later claim keeps what it touched"; ix.Observed("a", h) != want {
					t.Errorf("Observed(block %d) = %v, want %v", i, !want, want)
				}
			}
		})
	}
}

// TestRetractRestoresEvicted: what making room for a claim pushed out of a
// full endpoint comes back when the claim is retracted (its engine refused
// the request and allocated nothing), unless the claim was kept (its first
// token came), the blocks are held again, or their TTL ran out meanwhile.
func TestRetractRestoresEvicted(t *testing.T) {
	held, long, other := chainOf(1, 6), chainOf(2, 8), chainOf(3, 6)
	tests := []struct {
		name    string
		between func(ix *Index, cl Claim) Claim // between the long claim and Retract
		at      time.Time                       // when Retract's result is matched
		want    map[string]int                  // Match of held afterwards
		entries int                             // what a holds then
	}{
		{"retract restores", nil, t0.Add(2 * time.Second), map[string]int{"a": 6}, 6},
		{"kept claims restore nothing", func(_ *Index, cl Claim) Claim { return cl.Kept() },
			t0.Add(2 * time.Second), map[string]int{"a": 2}, 2},
		{"blocks held again are not doubled", func(ix *Index, cl Claim) Claim {
			ix.RecordPredicted("a", held, t0.Add(time.Second)) // evicts long's oldest
			return cl
		}, t0.Add(2 * time.Second), map[string]int{"a": 6}, 6},
		{"expired blocks stay out", func(ix *Index, cl Claim) Claim {
			ix.Expire(t0.Add(time.Minute + time.Millisecond)) // held's TTL ran out; long's has not
			return cl
		}, t0.Add(time.Minute + time.Millisecond), map[string]int{}, 0},
		{"another claim's evictions stay", func(ix *Index, cl Claim) Claim {
			ix.RecordPredicted("a", other, t0.Add(time.Second)) // pushes out held's first 2 blocks
			return cl
		}, t0.Add(2 * time.Second), map[string]int{}, 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ix := New(Options{PredictedTTL: time.Minute, PredictedTTLKnownCapacity: time.Minute})
			ix.SetCapacity("a", 10)
			ix.RecordPredicted("a", held, t0)
			cl := ix.ClaimPredicted("a", long, t0.Add(30*time.Second))
			if got := matchMap(ix, held, t0.Add(30*time.Second)); got["a"] != 2 {
				t.Fatalf("the long claim left %d of held's blocks, want 2 (capacity 10)", got["a"])
			}
			if tt.between != nil {
				cl = tt.between(ix, cl)
			}
			ix.Retract(cl)
			if got := matchMap(ix, held, tt.at); !maps.Equal(got, tt.want) {
				t.Errorf("Match of held after Retract = %v, want %v", got, tt.want)
			}
			if st := ix.Stats(); st.Entries != tt.entries || st.Entries != st.Observed+st.Predicted {
				t.Errorf("stats = %+v: want %d entries (capacity 10) and consistent counts", st, tt.entries)
			}
		})
	}
}

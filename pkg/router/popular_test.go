package router

import (
	"testing"
	"time"

	"github.com/kvpick/kvpick/pkg/scheduler"
)

// popularFleet is eight candidates, the first holders of them holding
// the prefix (10 blocks).
func popularFleet(holders int) []scheduler.Candidate {
	cands := make([]scheduler.Candidate, 8)
	for i := range holders {
		cands[i].CachedBlocks = 10
	}
	return cands
}

// popularReq is a request whose first 10 blocks are prefix's.
func popularReq(prefix uint64) *Prepared {
	chain := make([]uint64, 12)
	for i := range chain {
		chain[i] = prefix<<8 | uint64(i)
	}
	return &Prepared{Chain: chain}
}

// A prefix drawing 1 in 4 of the pool's requests on 8 endpoints (2 endpoints'
// worth, over the 0.15 threshold) is popular once a window has passed, and
// only while one candidate holds it; 1 in 100 (0.08) never is.
func TestPopularPrefixMarked(t *testing.T) {
	pp := newPopularity(0.15, time.Minute)
	start := time.Unix(1000, 0)
	// The mix: 1 request in 4 for prefix 1, 1 in 100 for prefix 2, the rest unheld.
	last := map[uint64]bool{} // each prefix's latest mark
	for i := range 2000 {
		now := start.Add(time.Duration(i) * 50 * time.Millisecond) // 20 req/s, 100 s
		for _, prefix := range []uint64{1, 2} {
			if (prefix == 1 && i%4 == 0) || (prefix == 2 && i%100 == 0) {
				p := popularReq(prefix)
				pp.mark(p, popularFleet(1), now)
				last[prefix] = p.Req.Popular
				if now.Sub(start) < time.Minute && p.Req.Popular {
					t.Fatalf("request %d at %v: popular within the first window", i, now.Sub(start))
				}
			}
		}
		if i%4 != 0 && i%100 != 0 {
			pp.mark(&Prepared{Chain: []uint64{uint64(i) << 20}}, popularFleet(0), now)
		}
	}
	if !last[1] {
		t.Errorf("prefix 1 (a quarter of the requests) is not popular after the window")
	}
	if last[2] {
		t.Errorf("prefix 2 (1 %% of the requests) is popular")
	}
	now := start.Add(101 * time.Second)
	p := popularReq(1)
	pp.mark(p, popularFleet(2), now)
	if p.Req.Popular {
		t.Errorf("prefix 1 held by two candidates is still marked popular")
	}
}

// A prefix with a large share of few requests is not popular: one picker
// of three replicas, 5 requests a second, one in three for the prefix,
// reaches the share at once but popularMinRequests only after a few seconds.
func TestPopularNeedsEnoughRequests(t *testing.T) {
	pp := newPopularity(0.15, time.Minute)
	start := time.Unix(1000, 0)
	pp.mark(&Prepared{Chain: []uint64{1 << 20}}, popularFleet(0), start) // the window starts
	now := start.Add(2 * time.Minute)
	popular := -1
	for i := range 60 {
		at := now.Add(time.Duration(i) * 200 * time.Millisecond)
		if i%3 != 0 {
			pp.mark(&Prepared{Chain: []uint64{uint64(i+2) << 20}}, popularFleet(0), at)
			continue
		}
		p := popularReq(1)
		pp.mark(p, popularFleet(1), at)
		if p.Req.Popular && popular < 0 {
			popular = i/3 + 1
		}
	}
	if popular < popularMinRequests || popular > popularMinRequests+1 {
		t.Errorf("prefix popular at its request %d, want at about %d (popularMinRequests)", popular, popularMinRequests)
	}
}

// A request is counted once however many times it is looked at (admission,
// then choice), and marking clears a flag left from an earlier look.
func TestPopularCountsARequestOnce(t *testing.T) {
	pp := newPopularity(0.15, time.Minute)
	now := time.Unix(1000, 0)
	p := popularReq(1)
	for range 3 {
		pp.mark(p, popularFleet(1), now)
	}
	if got := pp.byKey[p.Chain[9]].v; got != 1 {
		t.Errorf("prefix count %v after three looks at one request, want 1", got)
	}
	if got := pp.total.v; got != 1 {
		t.Errorf("total %v, want 1", got)
	}
	p.Req.Popular = true
	pp.mark(p, popularFleet(0), now)
	if p.Req.Popular {
		t.Errorf("a request no candidate holds kept Popular")
	}
}

// The counts stay bounded: past maxPopularKeys, counts that have decayed to
// nothing go first; if live ones fill it, all go and the window restarts.
func TestPopularKeysBounded(t *testing.T) {
	pp := newPopularity(0.15, time.Second)
	now := time.Unix(1000, 0)
	for i := range maxPopularKeys {
		pp.mark(popularReq(uint64(i)), popularFleet(1), now)
	}
	if len(pp.byKey) != maxPopularKeys {
		t.Fatalf("%d keys, want %d", len(pp.byKey), maxPopularKeys)
	}
	later := now.Add(10 * time.Second) // ten windows: every count decayed below 0.01
	pp.mark(popularReq(1<<40), popularFleet(1), later)
	if len(pp.byKey) != 1 {
		t.Errorf("%d keys after the stale ones went, want 1", len(pp.byKey))
	}
	for i := range maxPopularKeys {
		pp.mark(popularReq(uint64(i)+1<<41), popularFleet(1), later)
	}
	if len(pp.byKey) > maxPopularKeys || !pp.start.Equal(later) {
		t.Errorf("%d keys (max %d), window start %v, want a restart at %v", len(pp.byKey), maxPopularKeys, pp.start, later)
	}
}

// Off: a zero share or window builds no counter.
func TestPopularOff(t *testing.T) {
	if newPopularity(0, time.Minute) != nil || newPopularity(0.15, 0) != nil {
		t.Errorf("newPopularity built a counter for share 0 or window 0")
	}
}

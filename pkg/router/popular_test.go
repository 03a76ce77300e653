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

// popularMix marks 2,000 requests at 20 req/s: one request in every
// `every` for prefix 1, one in 100 for prefix 2, the rest on no held prefix. It returns each
// prefix's last mark with holders candidates holding it, and the request
// at which prefix 1 was first marked (-1 if never).
func popularMix(pp *popularity, every, holders int) (last map[uint64]bool, first int) {
	start := time.Unix(1000, 0)
	last, first = map[uint64]bool{}, -1
	for i := range 2000 {
		now := start.Add(time.Duration(i) * 50 * time.Millisecond)
		switch {
		case i%every == 0:
			p := popularReq(1)
			pp.mark(p, popularFleet(holders), now)
			last[1] = p.Req.Popular
			if p.Req.Popular && first < 0 {
				first = i
			}
		case i%100 == 1:
			p := popularReq(2)
			pp.mark(p, popularFleet(holders), now)
			last[2] = p.Req.Popular
		default:
			pp.mark(&Prepared{Chain: []uint64{uint64(i) << 20}}, popularFleet(0), now)
		}
	}
	return last, first
}

// A prefix is popular while each of its holders would carry at least share
// x one endpoint's worth of its requests: 1 in 4 of the requests on 8
// endpoints is 2 endpoints' worth, enough for 13 holders at 0.15, so it
// stays popular until every candidate holds it; 1 in 40 (0.2) wants a
// second holder and no third; 1 in 100 (0.08) none. No warm-up wait: it is
// popular from about its popularMinRequests-th request.
func TestPopularPrefixMarked(t *testing.T) {
	tests := []struct {
		every, holders int
		want           bool
	}{
		{4, 1, true}, {4, 2, true}, {4, 7, true}, {4, 8, false},
		{40, 1, true}, {40, 2, false},
	}
	for _, tt := range tests {
		last, first := popularMix(newPopularity(0.15, time.Minute), tt.every, tt.holders)
		if last[1] != tt.want {
			t.Errorf("1 in %d, %d holders: popular %v, want %v", tt.every, tt.holders, last[1], tt.want)
		}
		// The count decays between requests, so the floor is passed a
		// request or two after the popularMinRequests-th.
		if lo, hi := (popularMinRequests-1)*tt.every, (popularMinRequests+2)*tt.every; tt.want && (first < lo || first > hi) {
			t.Errorf("1 in %d, %d holders: first popular at request %d, want %d-%d (about its popularMinRequests-th)",
				tt.every, tt.holders, first, lo, hi)
		}
		if last[2] {
			t.Errorf("1 in %d, %d holders: prefix 2 (1 %% of the requests) is popular", tt.every, tt.holders)
		}
	}
}

// A prefix with a large share of few requests is not popular: one picker
// of three replicas, 5 requests a second, one in three for the prefix,
// reaches the share at once but popularMinRequests only after a few seconds.
func TestPopularNeedsEnoughRequests(t *testing.T) {
	pp := newPopularity(0.15, time.Minute)
	now := time.Unix(1000, 0)
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
// nothing go first; if live ones fill it, all go.
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
	// The map holds the survivor and maxPopularKeys-1 new keys when the last
	// one comes: all live, so all go, and the last is the only key left.
	if n := len(pp.byKey); n != 1 {
		t.Errorf("%d keys (max %d), want 1: every live count dropped once they filled the map", n, maxPopularKeys)
	}
}

// Off: a zero share or window builds no counter.
func TestPopularOff(t *testing.T) {
	if newPopularity(0, time.Minute) != nil || newPopularity(0.15, 0) != nil {
		t.Errorf("newPopularity built a counter for share 0 or window 0")
	}
}

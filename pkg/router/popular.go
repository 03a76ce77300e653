package router

import (
	"math"
	"sync"
	"time"

	"github.com/kvpick/kvpick/pkg/scheduler"
)

// popularity counts requests by the longest prefix the candidates hold,
// decaying with router.kvCost.popularWindow as time constant, for the time
// model's popular-prefix rule (router.kvCost.popularShare).
type popularity struct {
	share  float64 // popularShare
	window float64 // popularWindow, in seconds

	mu    sync.Mutex
	total decayed
	byKey map[uint64]*decayed // by the hash of the prefix's last block
}

// maxPopularKeys bounds the counts kept: past it, counts that have decayed
// to nothing (no request in about five windows) are dropped, and if that is
// not enough, all of them (each prefix then needs popularMinRequests again).
const maxPopularKeys = 1 << 16

// popularMinRequests is the fewest requests (decayed) a prefix must have
// drawn in the window to count as popular, whatever its share. A share
// estimated from a handful of requests is noise: a replica of three sees a
// third of the traffic, and with 150 prefixes at 15 req/s each drew about
// two of its requests a window, so chance runs of six passed 0.15 and
// three replicas copied prefixes nobody needed (routebench's shared-prefix,
// three synced replicas, seed 1: p95 0.277 s without the rule, 0.334 s
// with it, 0.288 s with this floor and prefill pressure). One picker sees
// three times the requests and never reached the share by chance there.
// The floor is also what keeps a warm-up quiet: until session 27 nothing
// was popular in the picker's first window, which left a prefix with a
// real share on one endpoint for its first minute (routebench's 40 hot
// prefixes, seeds 1-30: p95 11 % lower without that wait), while 8
// requests of one prefix among a warm-up's first arrivals are a share, not
// a chance run, where prefixes are many (shared-prefix at 15 req/s: level).
const popularMinRequests = 8

// decayed is a count decaying exponentially since t.
type decayed struct {
	v float64
	t time.Time
}

func (d *decayed) at(now time.Time, window float64) float64 {
	if d.t.IsZero() {
		return 0
	}
	return d.v * math.Exp(-now.Sub(d.t).Seconds()/window)
}

func (d *decayed) add(now time.Time, window float64) {
	d.v, d.t = d.at(now, window)+1, now
}

func newPopularity(share float64, window time.Duration) *popularity {
	if share <= 0 || window <= 0 {
		return nil
	}
	return &popularity{share: share, window: window.Seconds(), byKey: map[uint64]*decayed{}}
}

// mark counts p once (its first look, whether at admission or at choice)
// under the longest prefix the candidates hold, and sets p.Req.Popular when
// that prefix drew at least popularMinRequests and, for each candidate that
// holds it, at least share x one endpoint's worth of requests: a prefix
// with more traffic than its holders can take as a share gets another
// holder, however many it has (routebench's Zipf-skewed prefixes, whose
// first draws a third of the traffic, want most of the pool to hold it;
// until session 27 only a prefix with one holder was).
func (pp *popularity) mark(p *Prepared, cands []scheduler.Candidate, now time.Time) {
	p.Req.Popular = false
	held := scheduler.LongestHeld(cands)
	count := !p.popularCounted
	p.popularCounted = true
	pp.mu.Lock()
	if count {
		pp.total.add(now, pp.window)
	}
	if held == 0 || held > len(p.Chain) {
		pp.mu.Unlock()
		return
	}
	key := p.Chain[held-1]
	d := pp.byKey[key]
	if d == nil {
		pp.makeRoom(now)
		d = &decayed{}
		pp.byKey[key] = d
	}
	if count {
		d.add(now, pp.window)
	}
	v, total := d.at(now, pp.window), pp.total.at(now, pp.window)
	pp.mu.Unlock()
	if total <= 0 || v < popularMinRequests {
		return
	}
	holders := 0
	for i := range cands {
		if cands[i].CachedBlocks == held {
			holders++
		}
	}
	p.Req.Popular = holders < len(cands) && v/total*float64(len(cands)) >= pp.share*float64(holders)
}

// makeRoom keeps byKey under maxPopularKeys. Call with pp.mu held.
func (pp *popularity) makeRoom(now time.Time) {
	if len(pp.byKey) < maxPopularKeys {
		return
	}
	for k, d := range pp.byKey {
		if d.at(now, pp.window) < 0.01 {
			delete(pp.byKey, k)
		}
	}
	if len(pp.byKey) >= maxPopularKeys {
		clear(pp.byKey)
	}
}

package replicasync

import (
	"maps"
	"slices"
	"time"
)

// chainRec is one predicted prefix this replica recorded.
type chainRec struct {
	endpoint string
	chain    []uint64
	at       time.Time
}

// chainRing keeps the most recent predicted prefixes (a bounded window of
// what the index holds, which cannot list its claims), for snapshots.
type chainRing struct {
	recs []chainRec
	next int // where the next record goes
	full bool
}

func newChainRing(n int) chainRing { return chainRing{recs: make([]chainRec, n)} }

// push records chain at endpoint (the slice is kept, not copied: the router
// never changes a chain once recorded).
func (c *chainRing) push(endpoint string, chain []uint64, at time.Time) {
	if len(chain) == 0 || len(c.recs) == 0 {
		return
	}
	c.recs[c.next] = chainRec{endpoint, chain, at}
	c.next++
	if c.next == len(c.recs) {
		c.next, c.full = 0, true
	}
}

// since returns the records at or after cutoff, oldest first.
func (c *chainRing) since(cutoff time.Time) []chainRec {
	var out []chainRec
	start, n := 0, c.next
	if c.full {
		start, n = c.next, len(c.recs)
	}
	for i := range n {
		if rec := c.recs[(start+i)%len(c.recs)]; !rec.at.Before(cutoff) {
			out = append(out, rec)
		}
	}
	return out
}

// Snapshot is what a joining peer needs from this replica: the predicted
// prefixes recorded within Options.PredictedTTL (KindPredicted, oldest first, at
// most Sync.SnapshotChains), then each request in flight as KindAdded and,
// once its first token came, KindPrefillDone, then each request waiting in
// its queue as KindWaiting. Every event has Seq 0 (state,
// not a step: see the package comment), so applying a snapshot next to the
// live stream counts nothing twice. Safe to call at any time.
func (r *Replica) Snapshot() []Event {
	now := r.opts.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	recs := r.chains.since(now.Add(-r.opts.PredictedTTL))
	evs := make([]Event, 0, len(recs)+len(r.own))
	for _, c := range recs {
		evs = append(evs, r.state(Event{Kind: KindPredicted, At: c.at, Endpoint: c.endpoint, IndexChain: c.chain}))
	}
	for _, id := range slices.Sorted(maps.Keys(r.own)) {
		o := r.own[id]
		evs = append(evs, r.state(Event{Kind: KindAdded, Request: id, At: o.at, Endpoint: o.endpoint, Work: o.work}))
		if o.prefillDone {
			evs = append(evs, r.state(Event{Kind: KindPrefillDone, Request: id, At: o.last}))
		}
	}
	return r.snapshotWaits(evs)
}

// state stamps a snapshot event: this origin and epoch, Seq 0.
func (r *Replica) state(ev Event) Event {
	ev.Origin, ev.Epoch = r.opts.ID, r.epoch
	return ev
}

// expireOwn ends this replica's own requests with no lifecycle step for the
// orphan TTL (the router lost track of them): they leave the snapshot table
// and peers get a Freed, so nobody counts them forever.
func (r *Replica) expireOwn(now time.Time) int {
	cutoff := now.Add(-r.opts.Sync.OrphanTTL.Duration)
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for id, o := range r.own {
		if o.last.Before(cutoff) {
			delete(r.own, id)
			r.emit(Event{Kind: KindFreed, Request: id, At: now})
			n++
		}
	}
	return n
}

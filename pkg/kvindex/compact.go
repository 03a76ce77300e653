package kvindex

import "math/rand/v2"

// slack is how far bookkeeping may outgrow the live block count before it is
// compacted; compaction is O(n) and runs at most once per ~n operations.
const slack = 1024

// compact bounds the log, the expiry schedule and the engine map by the
// number of live blocks. Callers hold ep.mu.
func (ep *endpoint) compact() {
	live := len(ep.log) - ep.head
	switch {
	case live > 2*ep.blocks.len()+slack:
		ep.filterLog()
		ep.trimRecs()
	case ep.head > slack && ep.head > len(ep.log)/2:
		ep.log = append(ep.log[:0], ep.log[ep.head:]...)
		ep.head = 0
	}
	if ep.rhead > slack && ep.rhead > len(ep.recs)/2 {
		ep.recs = append(ep.recs[:0], ep.recs[ep.rhead:]...)
		ep.rhead = 0
	}
	if len(ep.engine) > 2*ep.blocks.len()+slack {
		ep.trimEngine()
	}
}

// filterLog keeps only the current touch of every block, in order.
func (ep *endpoint) filterLog() {
	out := ep.log[:0]
	for _, it := range ep.log[ep.head:] {
		if _, ok := ep.current(it); ok {
			out = append(out, it)
		}
	}
	clear(ep.log[len(out):])
	ep.log, ep.head = out, 0
}

// trimRecs drops expiry records that cover no live block any more.
func (ep *endpoint) trimRecs() {
	oldest := ep.clock + 1
	if len(ep.log) > 0 {
		oldest = ep.log[0].touch
	}
	i := ep.rhead
	for i < len(ep.recs) && ep.recs[i].touch < oldest {
		i++
	}
	ep.recs = append(ep.recs[:0], ep.recs[i:]...)
	ep.rhead = 0
}

// trimEngine forgets engine hashes whose block we no longer hold (evicted or
// expired); a later event naming one as parent then reports ErrUnknownParent.
func (ep *endpoint) trimEngine() {
	for eh, own := range ep.engine {
		if _, ok := ep.blocks.get(own); !ok {
			delete(ep.engine, eh)
		}
	}
}

// clearAll forgets every block of the endpoint. Callers hold ep.mu.
func (ep *endpoint) clearAll(s *shards) int {
	n := ep.blocks.len()
	ep.blocks.each(func(h, _ uint64) { ep.ops = append(ep.ops, op{h: h, del: true}) })
	ep.blocks = newTable[uint64](rand.Uint64())
	ep.engine = make(map[uint64]uint64)
	ep.log, ep.head, ep.recs, ep.rhead = nil, 0, nil, 0
	ep.observed, ep.predicted = 0, 0
	ep.flush(s)
	return n
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

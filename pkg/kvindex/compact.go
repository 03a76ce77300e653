package kvindex

import "math/rand/v2"

// slack is how far bookkeeping may outgrow the live block count before it is
// compacted; compaction is O(n) and runs at most once per ~n operations.
const slack = 1024

// compact bounds the node slice, the expiry schedule and the engine map by
// the number of live blocks. Callers hold ep.mu.
func (ep *endpoint) compact() {
	if len(ep.order.nodes) > 2*ep.order.live+slack {
		ep.packNodes()
	}
	// Trim again only once the schedule doubled, in case little could go.
	if n := len(ep.recs) - ep.rhead; n > ep.order.live+slack && n > 2*ep.recsTrimmed {
		ep.trimRecs()
		ep.recsTrimmed = len(ep.recs)
	}
	if ep.rhead > slack && ep.rhead > len(ep.recs)/2 {
		ep.recs = append(ep.recs[:0], ep.recs[ep.rhead:]...)
		ep.rhead = 0
	}
	// Several engine hashes may name one live block (an engine restarted with a
	// new hash seed re-stores the same tokens), so a trim may free little:
	// trim again only once the map doubled since, keeping the work amortised.
	if n := ep.engine.len(); n > 2*ep.blocks.len()+slack && n > 2*ep.engineTrimmed {
		ep.trimEngine()
		ep.engineTrimmed = ep.engine.len()
	}
}

// packNodes moves the live nodes to the front of a new slice, oldest first,
// and repoints the table at them.
func (ep *endpoint) packNodes() {
	l := newLRU()
	l.nodes = make([]node, 0, ep.order.live)
	for i := ep.order.oldest; i != none; i = ep.order.nodes[i].newer {
		nd := ep.order.nodes[i]
		*ep.blocks.ptr(nd.hash) = uint64(l.add(nd.hash, nd.tv))
	}
	ep.order = l
}

// trimRecs drops expiry records that cover no live block any more.
func (ep *endpoint) trimRecs() {
	oldest := ep.clock + 1
	if ep.order.oldest != none {
		oldest = ep.order.nodes[ep.order.oldest].tv >> 1
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
	var gone []uint64
	ep.engine.each(func(k uint64, ref engineRef) {
		if _, ok := ep.blocks.get(entryOf(ref.own, ref.ns)); !ok {
			gone = append(gone, k)
		}
	})
	for _, k := range gone {
		ep.engine.del(k)
	}
}

// clearAll forgets every block of the endpoint. Callers hold ep.mu.
func (ep *endpoint) clearAll(s *shards) int {
	n := ep.blocks.len()
	ep.blocks.each(func(h, _ uint64) { ep.ops = append(ep.ops, op{h: h, del: true}) })
	ep.blocks = newTable[uint64](rand.Uint64())
	ep.engine, ep.engineTrimmed = newTable[engineRef](rand.Uint64()), 0
	ep.order, ep.recs, ep.rhead, ep.recsTrimmed = newLRU(), nil, 0, 0
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

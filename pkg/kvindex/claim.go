package kvindex

import "time"

// Claim is what one predicted record added to an endpoint: the chain entries
// it found missing there (from the first such on) and the endpoint clock
// values of its touches. A request whose engine refused it computed none of
// its prompt, and without Retract every refused long prompt would push real
// prefixes out of the endpoint's share of the index. The zero Claim
// retracts nothing.
type Claim struct {
	ep       *endpoint
	added    []uint64 // the caller's chain from its first entry not held before
	from, to uint64
	// evicted is what making room for the claim pushed out of the endpoint,
	// oldest first, which Retract brings back: an engine that refuses a
	// request allocates nothing for it, so evicts nothing either. Without it
	// a refused 100,000-token prompt still cost the index a third of an
	// endpoint's prefixes (routebench's Mooncake trace has 307 prompts over
	// max_model_len a run).
	evicted []evicted
}

// evicted is a block an eviction dropped, with its touch value.
type evicted struct{ hash, tv uint64 }

// Kept is the claim once its request can no longer be refused (its first
// token came): Retract still takes back its entries, but it no longer keeps
// what its eviction dropped.
func (c Claim) Kept() Claim {
	c.evicted = nil
	return c
}

// ClaimPredicted is RecordPredicted returning the claim, for Retract. The
// claim keeps chain (no copy): it must not change while the claim may be
// retracted.
func (ix *Index) ClaimPredicted(endpoint string, chain []uint64, now time.Time) Claim {
	return ix.claim(endpoint, chain, now, false, true)
}

// ClaimUnreported records chain as predicted on endpoint like ClaimPredicted,
// but its claim covers every block of chain the engine has not reported, held
// before or not: Retract then drops each one no engine event and no later
// claim touched. It sets no TTL: the caller must Retract it. It is the
// events path's bridge from routing to the engine's report: a prefix counts
// as cached while requests routed with it are on their way, and only the
// engine's events keep it after that.
func (ix *Index) ClaimUnreported(endpoint string, chain []uint64, now time.Time) Claim {
	return ix.claim(endpoint, chain, now, true, false)
}

// claim records chain on endpoint; whole makes a bridge claim (see
// ClaimUnreported), undo keeps what its eviction dropped for Retract.
func (ix *Index) claim(endpoint string, chain []uint64, now time.Time, whole, undo bool) Claim {
	if len(chain) == 0 {
		return Claim{}
	}
	t := now.UnixNano()
	ep := ix.reg.getOrCreate(endpoint)
	ep.mu.Lock()
	defer ep.mu.Unlock()
	if ep.dead {
		return Claim{}
	}
	ep.expire(t)
	start := 0
	if whole {
		// The leading blocks the engine reported need no claim: events keep
		// and drop them, and not writing them is most of a bridge's cost
		// when a long prefix is shared.
		for start < len(chain) && ep.observedLocked(chain[start]) {
			start++
		}
		if start == len(chain) {
			return Claim{}
		}
	}
	from, first := ep.clock+1, len(chain)
	// Last block first, so earlier blocks are touched later and outlive the
	// later ones under LRU pressure.
	for i := len(chain) - 1; i >= start; i-- {
		if !ep.upsert(chain[i], false) {
			first = i
		}
	}
	// A bridge claim leaves no expiry record: Retract at the request's first
	// token or end is its end. With one, every endpoint on the events path
	// would have a record falling due every few requests, and each Match on
	// the request path would stop to expire them under the endpoint's lock.
	if !whole {
		exp := t + int64(ix.ttl(ep))
		if n := len(ep.recs); n > ep.rhead && ep.recs[n-1].exp == exp {
			ep.recs[n-1].touch = ep.clock // same expiry: extend the last record
		} else {
			ep.recs = append(ep.recs, expRec{ep.clock, exp})
		}
	}
	ep.capturing = undo
	ix.settle(ep)
	ep.capturing = false
	var dropped []evicted
	for _, b := range ep.captured {
		if b.tv>>1 < from { // not its own: a claim longer than the room evicts its own last blocks too
			dropped = append(dropped, b)
		}
	}
	ep.captured = ep.captured[:0]
	if whole {
		first = start
	}
	if first == len(chain) {
		return Claim{} // every block was held already: nothing of its own to take back
	}
	return Claim{ep: ep, added: chain[first:], from: from, to: ep.clock, evicted: dropped}
}

// Retract takes back the blocks a claim added that nothing has touched
// since: a later claim or an engine event for a block keeps it. Blocks held
// before a ClaimPredicted (its leading prefix) stay; a ClaimUnreported covers
// them too, except those an engine reported. Returns the entries dropped.
func (ix *Index) Retract(c Claim) int {
	if c.ep == nil {
		return 0
	}
	ep := c.ep
	ep.mu.Lock()
	defer ep.mu.Unlock()
	if ep.dead {
		return 0
	}
	n := 0
	for _, h := range c.added {
		v, ok := ep.blocks.get(h)
		if !ok {
			continue
		}
		tv := ep.order.nodes[uint32(v)].tv
		if touch := tv >> 1; tv&1 == 0 && touch >= c.from && touch <= c.to {
			ep.drop(h)
			n++
		}
	}
	ix.retracted.Add(uint64(n))
	ep.restore(c.evicted)
	ix.settle(ep) // what it restored fits in the room it freed, unless others claimed that since
	return n
}

// restore brings back blocks a claim's eviction dropped, as the oldest (they
// were older than every block kept), unless held again since or past their
// TTL. Callers hold ep.mu.
func (ep *endpoint) restore(ev []evicted) {
	for i := len(ev) - 1; i >= 0; i-- {
		b := ev[i]
		if b.tv>>1 <= ep.expiredTo {
			continue
		}
		v, had := ep.blocks.upsert(b.hash)
		if had {
			continue
		}
		*v = uint64(ep.order.addOldest(b.hash, b.tv))
		if b.tv&1 == 1 {
			ep.observed++
		} else {
			ep.predicted++
		}
		ep.ops = append(ep.ops, op{h: b.hash})
	}
}

// Observed reports whether endpoint holds block h as the engine reported it
// (an event), not only as claimed: what checks of the events themselves ask,
// since a claim on the events path stands for blocks not reported yet.
func (ix *Index) Observed(endpoint string, h uint64) bool {
	ep := ix.reg.get(endpoint)
	if ep == nil {
		return false
	}
	ep.mu.Lock()
	defer ep.mu.Unlock()
	return !ep.dead && ep.observedLocked(h)
}

// observedLocked reports whether the endpoint holds h as an engine reported
// it. Callers hold ep.mu.
func (ep *endpoint) observedLocked(h uint64) bool {
	v, ok := ep.blocks.get(h)
	return ok && ep.order.nodes[uint32(v)].tv&1 == 1
}

// ttl is how long a predicted claim on ep lasts. Where the engine's
// capacity bounds ep, pruning least recently used first stands for the
// engine's evictions and the TTL only for traffic this picker never saw;
// elsewhere the TTL is the only bound that tracks them. Claims expire in
// the order they were recorded, so when an endpoint's capacity becomes
// unknown the shorter claims after it wait for the longer ones before them.
// Callers hold ep.mu.
func (ix *Index) ttl(ep *endpoint) time.Duration {
	if ep.capacity > 0 && !ep.multiNS {
		return ix.opts.PredictedTTLKnownCapacity
	}
	return ix.opts.PredictedTTL
}

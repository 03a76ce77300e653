package kvindex

import (
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
)

// endpoint is one endpoint's bookkeeping: which blocks it holds, their LRU
// order and expiry schedule, and (observed path) the engine-hash mapping.
// Lock order: endpoint.mu before any shard lock. Match takes an endpoint's
// lock only when nextDue says some of its claims have expired.
type endpoint struct {
	mu   sync.Mutex
	id   uint32
	name string
	dead bool // unlinked by RemoveEndpoint; drop further writes

	capacity int  // 0: Options.MaxBlocksPerEndpoint
	multiNS  bool // blocks of a tier or KV group other than group 0 on the GPU were stored

	// blocks maps own hash -> index of its node in order; the node holds the
	// block's touch (a per-endpoint clock value) and observed bit, and order
	// lists the blocks least recently touched first.
	blocks table[uint64]
	order  lru
	// recs schedules predicted expiry: every block last touched at or before
	// recs[i].touch expires at recs[i].exp (predicted TTL is constant).
	recs        []expRec
	rhead       int
	recsTrimmed int // len(recs) after the last trimRecs
	// engine maps the engine's block hash to our own (observed path).
	engine        table[engineRef] // keyed by engineKey
	engineTrimmed int              // len(engine) after the last trimEngine

	clock               uint64
	observed, predicted int
	// capturing makes evict keep what it drops in captured: a predicted
	// claim's undo record (see Claim.evicted).
	capturing bool
	captured  []evicted
	// expiredTo is the latest touch whose TTL has run out: an evicted block
	// touched at or before it is not brought back.
	expiredTo          uint64
	evictions, expired uint64
	scratch            []uint64
	// nextDue is the expiry (UnixNano) of the oldest pending expiry record,
	// never if none; Match reads it without ep.mu to find due endpoints.
	nextDue atomic.Int64
	// ops queues shard changes; flush applies them grouped by shard before
	// ep.mu is released, so shard state follows endpoint state in order.
	ops, opbuf []op
}

// never is a nextDue meaning "nothing scheduled to expire".
const never = int64(math.MaxInt64)

type expRec struct {
	touch uint64
	exp   int64
}

func newEndpoint(name string, id uint32) *endpoint {
	ep := &endpoint{id: id, name: name, blocks: newTable[uint64](rand.Uint64()), order: newLRU(), engine: newTable[engineRef](rand.Uint64())}
	ep.nextDue.Store(never)
	return ep
}

// upsert touches block h, recording it as held (observed claims never
// expire and stay observed), and reports whether it was held already.
// Callers hold ep.mu.
func (ep *endpoint) upsert(h uint64, observed bool) bool {
	ep.clock++
	v, had := ep.blocks.upsert(h)
	if !had {
		*v = uint64(ep.order.add(h, ep.clock<<1|b2u(observed)))
		if observed {
			ep.observed++
		} else {
			ep.predicted++
		}
		ep.ops = append(ep.ops, op{h: h})
		return false
	}
	i := uint32(*v)
	wasObs := ep.order.nodes[i].tv&1 == 1
	if observed && !wasObs {
		ep.predicted--
		ep.observed++
	}
	ep.order.touch(i, ep.clock<<1|b2u(observed || wasObs))
	return true
}

// drop forgets block h. Callers hold ep.mu.
func (ep *endpoint) drop(h uint64) bool {
	v, ok := ep.blocks.get(h)
	if !ok {
		return false
	}
	ep.blocks.del(h)
	ep.forget(uint32(v))
	return true
}

// forget frees node i, whose block is already out of ep.blocks.
func (ep *endpoint) forget(i uint32) {
	if ep.order.nodes[i].tv&1 == 1 {
		ep.observed--
	} else {
		ep.predicted--
	}
	ep.ops = append(ep.ops, op{h: ep.order.nodes[i].hash, del: true})
	ep.order.remove(i)
}

// evict prunes least recently touched blocks down to target once the
// endpoint holds more than limit. Returns the number evicted.
func (ep *endpoint) evict(limit, target int) int {
	if ep.blocks.len() <= limit {
		return 0
	}
	n := 0
	for ep.blocks.len() > target && ep.order.oldest != none {
		nd := ep.order.nodes[ep.order.oldest]
		if ep.capturing {
			ep.captured = append(ep.captured, evicted{nd.hash, nd.tv})
		}
		ep.drop(nd.hash)
		n++
	}
	ep.evictions += uint64(n)
	return n
}

// expire drops predicted blocks whose TTL ran out by t (UnixNano).
func (ep *endpoint) expire(t int64) int {
	var w uint64
	for ep.rhead < len(ep.recs) && ep.recs[ep.rhead].exp <= t {
		w = ep.recs[ep.rhead].touch
		ep.rhead++
	}
	ep.expiredTo = max(ep.expiredTo, w)
	n := 0
	for w != 0 && ep.order.oldest != none {
		i := ep.order.oldest
		nd := ep.order.nodes[i]
		switch {
		case nd.tv>>1 > w:
			w = 0 // the rest were touched later
		case nd.tv&1 == 1: // observed: keep, move behind the expiry window
			ep.clock++
			ep.order.touch(i, ep.clock<<1|1)
		default:
			ep.drop(nd.hash)
			n++
		}
	}
	ep.expired += uint64(n)
	return n
}

// maxKeptOps bounds the op buffers kept between calls.
const maxKeptOps = 1 << 16

// flush applies queued shard changes and publishes nextDue. Callers hold ep.mu.
func (ep *endpoint) flush(s *shards) {
	due := never
	if ep.rhead < len(ep.recs) {
		due = ep.recs[ep.rhead].exp
	}
	ep.nextDue.Store(due)
	if len(ep.ops) == 0 {
		return
	}
	ep.opbuf = s.apply(ep.id, ep.ops, ep.opbuf)
	ep.ops = ep.ops[:0]
	if cap(ep.ops) > maxKeptOps {
		ep.ops, ep.opbuf = nil, nil
	}
}

// Package activework accounts the work this picker has put on each endpoint
// and not yet seen finish: prompt tokens still to prefill, KV blocks held by
// decoding requests, and requests in flight. The request lifecycle feeds it
// (dispatch, first token, progress, end); readers get per-endpoint counts
// without taking a lock. Time is passed in so a simulator can drive it.
package activework

import (
	"sync"
	"sync/atomic"
	"time"
)

// Counts is one endpoint's active work.
type Counts struct {
	// PrefillTokens: uncached prompt tokens of requests with no first token yet.
	PrefillTokens int
	// DecodeBlocks: KV blocks held by requests in flight (prompt plus
	// output). A prompt block shared by several requests on the endpoint is
	// counted once, as the engine's prefix cache stores it once (to within
	// segBlocks-1 blocks per request where chains part).
	DecodeBlocks int
	// Requests in flight.
	Requests int
	// ContextTokens is the context (prompt plus output so far) of every
	// request in flight, summed per request: what a decode step reads, since
	// each sequence attends over its own context even where blocks are shared.
	ContextTokens int
	// PendingBlocks is the blocks of requests with no first token yet, which
	// may still wait in the engine's queue holding no KV.
	PendingBlocks int
}

// HeldBlocks is the KV held by work past its first token: the decode blocks
// less those of requests still waiting for their prefill (a busy threshold
// counts only this, so a burst the engine can queue is not refused).
func (c Counts) HeldBlocks() int { return max(c.DecodeBlocks-c.PendingBlocks, 0) }

// Work describes a dispatched request.
type Work struct {
	PromptTokens   int
	UncachedTokens int // prompt tokens the endpoint must compute (prompt minus cached prefix)
	// ExpectedOutput tokens (max_tokens when known) are reserved up front:
	// a long answer's blocks are held for its whole decode.
	ExpectedOutput int
	BlockSize      int
	// Blocks are the prompt's full-block hashes; requests on one endpoint
	// share the blocks whose hashes match. The slice is kept, not copied, and
	// must not change afterwards.
	Blocks []uint64
}

type counter struct {
	prefill, decode, reqs atomic.Int64
	ctx, pending          atomic.Int64

	mu   sync.Mutex
	refs map[uint64]int32 // prompt segments in flight (by last block hash) -> requests holding them

	rate prefillRate
	// dispatched is every uncached prompt token ever started here, so a
	// request can tell whether prefill joined its steps (Handle.Joined).
	dispatched atomic.Int64
}

// segBlocks is the granularity of shared-block counting: prompt blocks are
// counted in segments of this many, keyed by the hash of the segment's last
// block (hashes are chained, so it names the whole prefix up to there). Per
// block refcounts cost a map write per block on every dispatch and again at
// the end, hundreds per long prompt and on the decision path's heels; per
// segment they cost an eighth of that. The price: where two chains part
// inside a segment, or one ends inside it, that segment is counted for each,
// an over-count of at most segBlocks-1 blocks per request.
const segBlocks = 8

// segment returns segment s of blocks: its key and its length in blocks.
func segment(blocks []uint64, s int) (key uint64, n int64) {
	end := min((s+1)*segBlocks, len(blocks))
	return blocks[end-1], int64(end - s*segBlocks)
}

func nsegments(blocks []uint64) int { return (len(blocks) + segBlocks - 1) / segBlocks }

// hold references blocks and returns how many were not held before. Held
// segments are prefix-closed along a chain (a segment's key chains all
// blocks before it), so the held part is a prefix found by binary search.
func (c *counter) hold(blocks []uint64) int64 {
	if len(blocks) == 0 {
		return 0
	}
	ns := nsegments(blocks)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.refs == nil {
		c.refs = make(map[uint64]int32, ns)
	}
	lo, hi := 0, ns // segments [0, lo) held, [hi, ns) not
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if k, _ := segment(blocks, mid); c.refs[k] > 0 {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	var added int64
	for s := range ns {
		k, n := segment(blocks, s)
		if s >= lo && c.refs[k] == 0 {
			added += n
		}
		c.refs[k]++
	}
	return added
}

// release drops references and returns how many blocks no request holds now.
func (c *counter) release(blocks []uint64) int64 {
	if len(blocks) == 0 {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var gone int64
	for s := range nsegments(blocks) {
		k, n := segment(blocks, s)
		if r := c.refs[k] - 1; r > 0 {
			c.refs[k] = r
		} else if r == 0 {
			delete(c.refs, k)
			gone += n
		}
	}
	return gone
}

// Tracker is safe for concurrent use.
type Tracker struct {
	ttl      time.Duration
	onChange func()
	// deferring counts Defer calls not yet done; pending is a change
	// held back meanwhile.
	deferring atomic.Int32
	pending   atomic.Bool

	mu    sync.RWMutex
	per   map[string]*counter
	live  map[*Handle]struct{}
	total atomic.Int64
	// window is the prefill rate's averaging window in nanoseconds; 0: off.
	window atomic.Int64
}

// New returns a Tracker that frees entries idle for longer than ttl (orphans
// whose end the lifecycle never reported). onChange, if not nil, runs after
// work is freed or a prefill completes (capacity may have freed).
func New(ttl time.Duration, onChange func()) *Tracker {
	return &Tracker{ttl: ttl, onChange: onChange, per: map[string]*counter{}, live: map[*Handle]struct{}{}}
}

// Counts returns the active work on endpoint.
func (t *Tracker) Counts(endpoint string) Counts {
	c := t.lookup(endpoint)
	if c == nil {
		return Counts{}
	}
	return Counts{PrefillTokens: int(c.prefill.Load()), DecodeBlocks: int(c.decode.Load()), Requests: int(c.reqs.Load()),
		ContextTokens: int(c.ctx.Load()), PendingBlocks: int(c.pending.Load())}
}

// InFlight is the number of requests in flight on all endpoints.
func (t *Tracker) InFlight() int { return int(t.total.Load()) }

// lookup is endpoint's counter, nil when none is kept (nothing dispatched
// there since it was last forgotten).
func (t *Tracker) lookup(endpoint string) *counter {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.per[endpoint]
}

// counter is endpoint's counter, made on first use.
func (t *Tracker) counter(endpoint string) *counter {
	c := t.lookup(endpoint)
	if c != nil {
		return c
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if c = t.per[endpoint]; c == nil {
		c = &counter{}
		t.per[endpoint] = c
	}
	return c
}

// Add accounts a request dispatched to endpoint and returns its handle: Start
// and Hold in one.
func (t *Tracker) Add(endpoint string, w Work, now time.Time) *Handle {
	h := t.Start(endpoint, w, now)
	h.Hold()
	return h
}

// Start accounts the cheap part of a dispatch at once: the request, its
// prefill tokens and its private blocks. Its shared prompt blocks (map writes
// per segment) wait for Hold, so a caller can put them after its answer while
// concurrent decisions already see the request's load.
func (t *Tracker) Start(endpoint string, w Work, now time.Time) *Handle {
	if w.BlockSize <= 0 {
		w.BlockSize = 16
	}
	h := &Handle{t: t, c: t.counter(endpoint), endpoint: endpoint, w: w}
	h.prefill = int64(max(w.UncachedTokens, 0))
	h.private = h.privateBlocks(max(w.ExpectedOutput, 0))
	h.ctx = int64(max(w.PromptTokens, 0))
	h.pending = int64(blocks(max(w.PromptTokens, 0)+max(w.ExpectedOutput, 0), w.BlockSize))
	h.last.Store(now.UnixNano())
	h.c.ctx.Add(h.ctx)
	h.c.pending.Add(h.pending)
	h.c.prefill.Add(h.prefill)
	h.mark = h.c.dispatched.Add(h.prefill)
	if w := time.Duration(t.window.Load()); w > 0 && h.prefill > 0 {
		h.c.rate.add(h.prefill, now, w)
	}
	h.c.decode.Add(h.private)
	h.c.reqs.Add(1)
	t.total.Add(1)
	t.mu.Lock()
	t.live[h] = struct{}{}
	t.mu.Unlock()
	return h
}

// Expire frees handles idle for longer than the TTL and returns how many.
func (t *Tracker) Expire(now time.Time) int {
	cutoff := now.Add(-t.ttl).UnixNano()
	var stale []*Handle
	t.mu.RLock()
	for h := range t.live {
		if h.last.Load() < cutoff {
			stale = append(stale, h)
		}
	}
	t.mu.RUnlock()
	for _, h := range stale {
		h.Free()
	}
	return len(stale)
}

// Forget drops the counters of an endpoint that left the pool. Handles still
// open on it keep working and free into the detached counter.
func (t *Tracker) Forget(endpoint string) {
	t.mu.Lock()
	delete(t.per, endpoint)
	t.mu.Unlock()
}

func blocks(tokens, size int) int { return (tokens + size - 1) / size }

func (t *Tracker) changed() {
	if t.onChange == nil {
		return
	}
	if t.deferring.Load() > 0 {
		t.pending.Store(true)
		// A Defer that ended between the load and the store did not see
		// the change: whoever clears pending first runs onChange.
		if t.deferring.Load() > 0 || !t.pending.Swap(false) {
			return
		}
	}
	t.onChange()
}

// Defer holds onChange back until the returned func runs, then runs it once
// if anything changed meanwhile (from any goroutine). Replica sync applies a
// peer's batch under it: the admission queue then releases once, against
// the whole batch, not after a free whose successor (often the same batch's
// next added, on the same endpoint) it has not seen yet, and not once per
// event. Calls nest; run each returned func exactly once.
func (t *Tracker) Defer() (done func()) {
	t.deferring.Add(1)
	return func() {
		if t.deferring.Add(-1) == 0 && t.pending.Swap(false) && t.onChange != nil {
			t.onChange()
		}
	}
}

// Sharers is how many requests in flight on endpoint hold the first n
// blocks of chain (counted by whole segments: 0 when n is under one).
func (t *Tracker) Sharers(endpoint string, chain []uint64, n int) int {
	n = min(n, len(chain))
	s := n/segBlocks - 1
	if s < 0 {
		return 0
	}
	c := t.lookup(endpoint)
	if c == nil {
		return 0
	}
	k, _ := segment(chain, s)
	c.mu.Lock()
	defer c.mu.Unlock()
	return int(c.refs[k])
}

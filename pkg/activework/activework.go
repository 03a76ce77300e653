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
	// counted once, as the engine's prefix cache stores it once.
	DecodeBlocks int
	// Requests in flight.
	Requests int
}

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

	mu   sync.Mutex
	refs map[uint64]int32 // shared prompt blocks in flight -> requests holding them
}

// hold references blocks and returns how many were not held before. Held
// blocks are prefix-closed along a chain (block i is held only with blocks
// 0..i-1: hashes are chained), so the held part of blocks is a prefix found
// by binary search; each block then costs one map write.
func (c *counter) hold(blocks []uint64) int64 {
	if len(blocks) == 0 {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.refs == nil {
		c.refs = make(map[uint64]int32, len(blocks))
	}
	lo, hi := 0, len(blocks) // blocks[:lo] held, blocks[hi:] not
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if _, ok := c.refs[blocks[mid]]; ok {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	for _, b := range blocks[:lo] {
		c.refs[b]++
	}
	for _, b := range blocks[lo:] {
		c.refs[b] = 1
	}
	return int64(len(blocks) - lo)
}

// release drops references and returns how many blocks no request holds now.
func (c *counter) release(blocks []uint64) int64 {
	if len(blocks) == 0 {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var gone int64
	for _, b := range blocks {
		if n := c.refs[b] - 1; n > 0 {
			c.refs[b] = n
		} else if n == 0 {
			delete(c.refs, b)
			gone++
		}
	}
	return gone
}

// Tracker is safe for concurrent use.
type Tracker struct {
	ttl      time.Duration
	onChange func()

	mu    sync.RWMutex
	per   map[string]*counter
	live  map[*Handle]struct{}
	total atomic.Int64
}

// New returns a Tracker that frees entries idle for longer than ttl (orphans
// whose end the lifecycle never reported). onChange, if not nil, runs after
// work is freed or a prefill completes (capacity may have freed).
func New(ttl time.Duration, onChange func()) *Tracker {
	return &Tracker{ttl: ttl, onChange: onChange, per: map[string]*counter{}, live: map[*Handle]struct{}{}}
}

// Counts returns the active work on endpoint.
func (t *Tracker) Counts(endpoint string) Counts {
	t.mu.RLock()
	c := t.per[endpoint]
	t.mu.RUnlock()
	if c == nil {
		return Counts{}
	}
	return Counts{PrefillTokens: int(c.prefill.Load()), DecodeBlocks: int(c.decode.Load()), Requests: int(c.reqs.Load())}
}

// InFlight is the number of requests in flight on all endpoints.
func (t *Tracker) InFlight() int { return int(t.total.Load()) }

func (t *Tracker) counter(endpoint string) *counter {
	t.mu.RLock()
	c := t.per[endpoint]
	t.mu.RUnlock()
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

// Add accounts a request dispatched to endpoint and returns its handle.
func (t *Tracker) Add(endpoint string, w Work, now time.Time) *Handle {
	if w.BlockSize <= 0 {
		w.BlockSize = 16
	}
	h := &Handle{t: t, c: t.counter(endpoint), endpoint: endpoint, w: w}
	h.prefill = int64(max(w.UncachedTokens, 0))
	h.private = h.privateBlocks(max(w.ExpectedOutput, 0))
	h.last.Store(now.UnixNano())
	h.c.prefill.Add(h.prefill)
	h.c.decode.Add(h.private + h.c.hold(w.Blocks))
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
	if t.onChange != nil {
		t.onChange()
	}
}

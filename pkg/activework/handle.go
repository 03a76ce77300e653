package activework

import (
	"sync"
	"sync/atomic"
	"time"
)

// Handle is one dispatched request's accounting. Its methods are safe for
// concurrent use; after Free they do nothing.
type Handle struct {
	t        *Tracker
	c        *counter
	endpoint string
	w        Work
	last     atomic.Int64
	mark     int64 // counter.dispatched just after this request's own prefill

	mu      sync.Mutex
	prefill int64 // still counted as prefill
	private int64 // blocks only this request holds: the partial prompt block and the output
	ctx     int64 // context tokens counted (prompt plus output seen)
	pending int64 // blocks counted as pending (no first token yet)
	held    bool  // the shared prompt blocks are counted (Hold)
	freed   bool
}

// privateBlocks is the request's blocks beyond its shared full prompt blocks.
func (h *Handle) privateBlocks(output int) int64 {
	return int64(max(blocks(h.w.PromptTokens+output, h.w.BlockSize)-len(h.w.Blocks), 0))
}

// Endpoint is where the request was sent.
func (h *Handle) Endpoint() string { return h.endpoint }

// Joined is the uncached prompt tokens started on the endpoint since this
// request (by this picker or, through replica sync, its peers): prefill
// that may have shared its engine steps.
func (h *Handle) Joined() int64 { return h.c.dispatched.Load() - h.mark }

// PrefillDone moves the request out of the prefill count (its first token came).
func (h *Handle) PrefillDone(now time.Time) {
	h.mu.Lock()
	done := !h.freed && h.prefill > 0
	if done {
		h.c.prefill.Add(-h.prefill)
		h.prefill = 0
	}
	if !h.freed {
		h.c.pending.Add(-h.pending)
		h.pending = 0
	}
	h.mu.Unlock()
	h.last.Store(now.UnixNano())
	if done {
		h.t.changed()
	}
}

// Progress grows the decode blocks as output passes what was reserved.
func (h *Handle) Progress(generated int, now time.Time) {
	h.last.Store(now.UnixNano())
	want := h.privateBlocks(max(generated, h.w.ExpectedOutput))
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.freed && want > h.private {
		h.c.decode.Add(want - h.private)
		h.private = want
	}
	if ctx := int64(h.w.PromptTokens + generated); !h.freed && ctx > h.ctx {
		h.c.ctx.Add(ctx - h.ctx)
		h.ctx = ctx
	}
}

// Hold counts the request's shared prompt blocks (see Start). Idempotent;
// nothing after Free.
func (h *Handle) Hold() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.freed || h.held {
		return
	}
	h.held = true
	h.c.decode.Add(h.c.hold(h.w.Blocks))
}

// Free releases everything the request holds. Idempotent.
func (h *Handle) Free() {
	h.mu.Lock()
	if h.freed {
		h.mu.Unlock()
		return
	}
	h.freed = true
	h.c.prefill.Add(-h.prefill)
	h.c.decode.Add(-h.private)
	h.c.ctx.Add(-h.ctx)
	h.c.pending.Add(-h.pending)
	if h.held {
		h.c.decode.Add(-h.c.release(h.w.Blocks))
	}
	h.c.reqs.Add(-1)
	h.prefill, h.private, h.ctx, h.pending = 0, 0, 0, 0
	h.mu.Unlock()
	h.t.total.Add(-1)
	h.t.mu.Lock()
	delete(h.t.live, h)
	h.t.mu.Unlock()
	h.t.changed()
}

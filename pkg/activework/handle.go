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

	mu      sync.Mutex
	prefill int64 // still counted as prefill
	decode  int64 // blocks currently counted
	freed   bool
}

// Endpoint is where the request was sent.
func (h *Handle) Endpoint() string { return h.endpoint }

// PrefillDone moves the request out of the prefill count (its first token came).
func (h *Handle) PrefillDone(now time.Time) {
	h.mu.Lock()
	done := !h.freed && h.prefill > 0
	if done {
		h.c.prefill.Add(-h.prefill)
		h.prefill = 0
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
	want := int64(blocks(h.w.PromptTokens+max(generated, h.w.ExpectedOutput), h.w.BlockSize))
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.freed && want > h.decode {
		h.c.decode.Add(want - h.decode)
		h.decode = want
	}
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
	h.c.decode.Add(-h.decode)
	h.c.reqs.Add(-1)
	h.prefill, h.decode = 0, 0
	h.mu.Unlock()
	h.t.total.Add(-1)
	h.t.mu.Lock()
	delete(h.t.live, h)
	h.t.mu.Unlock()
	h.t.changed()
}

package fleetsim

import (
	"time"

	"github.com/kvpick/kvpick/pkg/kvevents"
)

// kind orders simultaneous events: engine results first (they free
// capacity), then event deliveries, arrivals, expiries, scrapes, upkeep, and
// last the start of steps, so every request dispatched at an instant joins
// the step that starts then.
type kind uint8

const (
	evStepEnd kind = iota
	evDeliver
	evArrival
	evExpire
	evScrape
	evSample
	evTick
	evStepStart
)

// event is one scheduled happening in virtual time.
type event struct {
	at    time.Duration
	kind  kind
	seq   uint64
	node  int
	batch kvevents.Batch
}

func (a *event) before(b *event) bool {
	if a.at != b.at {
		return a.at < b.at
	}
	if a.kind != b.kind {
		return a.kind < b.kind
	}
	return a.seq < b.seq
}

// eventHeap is a binary min-heap of events (hand-rolled: container/heap would
// box every event).
type eventHeap struct {
	items []event
	seq   uint64
}

func (h *eventHeap) Len() int { return len(h.items) }

func (h *eventHeap) push(e event) {
	h.seq++
	e.seq = h.seq
	h.items = append(h.items, e)
	i := len(h.items) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !h.items[i].before(&h.items[p]) {
			break
		}
		h.items[i], h.items[p] = h.items[p], h.items[i]
		i = p
	}
}

func (h *eventHeap) pop() event {
	top := h.items[0]
	n := len(h.items) - 1
	h.items[0] = h.items[n]
	h.items[n] = event{}
	h.items = h.items[:n]
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < n && h.items[l].before(&h.items[m]) {
			m = l
		}
		if r < n && h.items[r].before(&h.items[m]) {
			m = r
		}
		if m == i {
			break
		}
		h.items[i], h.items[m] = h.items[m], h.items[i]
		i = m
	}
	return top
}

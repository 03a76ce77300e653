package admission

import (
	"math"
	"slices"
	"sync/atomic"
	"time"

	v1 "github.com/kvpick/kvpick/api/v1alpha1"
)

// passes numbers Release passes across every Core (Item.Pass).
var passes atomic.Uint64

// Release removes and returns, in priority order then the queue's Order
// (FIFO, or least Work first for wspt) with its Aging tiers, every queued item for which
// canDispatch returns true. An item that cannot go does not hold back
// a later one that can (no head-of-line blocking), unless canDispatch
// refused the whole Group (RefuseGroup): then the group's later items are not
// asked in this pass. Items already past their
// deadline at now are skipped and left for Expire, so a timeout never becomes a
// late dispatch.
//
// Reservation contract: canDispatch is called once per eligible item, in
// order, and when it returns true it must reserve the capacity the item will
// use (e.g. add its prompt tokens to the caller's in-flight counter), so that
// the calls for later items see it and several items do not all pass on the
// same free slot. The reservation then belongs to the caller. canDispatch must
// not call back into this Core. Returns nil when nothing was released.
func (c *Core[T]) Release(now time.Time, canDispatch func(*Item[T]) bool) []*Item[T] {
	if c.n == 0 || canDispatch == nil {
		return nil
	}
	c.pass = passes.Add(1)
	defer func() { c.pass = 0 }()
	var out []*Item[T]
	var refused []string // groups refused whole in this pass (few: a linear scan)
	for _, l := range c.levels {
		for _, it := range c.ordered(l, now) {
			if !now.Before(it.deadline) || it.Group != "" && slices.Contains(refused, it.Group) {
				continue
			}
			it.groupOff = false
			if canDispatch(it) {
				c.unlink(it)
				out = append(out, it)
			} else if it.groupOff && it.Group != "" {
				refused = append(refused, it.Group)
			}
		}
	}
	clear(c.scratch) // keep no pointers to items that left
	clear(c.tiers[:cap(c.tiers)])
	if out != nil {
		c.compact()
	}
	return out
}

// Expire removes and returns the items whose deadline (push time + MaxWait) is
// at or before now, in priority order then FIFO; the caller answers them 429
// queue_timeout. Cost is proportional to the items returned plus the number of
// distinct priorities.
func (c *Core[T]) Expire(now time.Time) []*Item[T] {
	var out []*Item[T]
	for _, l := range c.levels {
		// Each level is in push order and push times never go backwards, so
		// the expired items of a level are a prefix of it.
		for l.head != nil && !now.Before(l.head.deadline) {
			it := l.head
			c.unlink(it)
			out = append(out, it)
		}
	}
	if out != nil {
		c.compact()
	}
	return out
}

// Remove takes it out of the queue (the caller gave up, e.g. the client went
// away). Reports false when it is not queued here.
func (c *Core[T]) Remove(it *Item[T]) bool {
	if it == nil || it.owner != c {
		return false
	}
	c.unlink(it)
	c.compact()
	return true
}

// Drain removes and returns every queued item in priority order then FIFO
// (shutdown).
func (c *Core[T]) Drain() []*Item[T] {
	var out []*Item[T]
	for _, l := range c.levels {
		for l.head != nil {
			it := l.head
			c.unlink(it)
			out = append(out, it)
		}
	}
	c.levels = c.levels[:0]
	return out
}

// NextDeadline is the earliest deadline among the queued items, for a timer
// or a simulator's event queue; false when the queue is empty.
func (c *Core[T]) NextDeadline() (time.Time, bool) {
	var next time.Time
	found := false
	for _, l := range c.levels {
		if d := l.head.deadline; !found || d.Before(next) {
			next, found = d, true
		}
	}
	return next, found
}

// ordered lists l's items in release order at now, in a scratch copy the
// caller may unlink from: the FIFO (expiry walks it from the head), or under
// wspt the level's class order (work class, then arrival); within either,
// the Aging tiers.
func (c *Core[T]) ordered(l *level[T], now time.Time) []*Item[T] {
	items := c.scratch[:0]
	if c.opts.Order == v1.QueueWSPT {
		items = append(items, l.byClass...)
	} else {
		for it := l.head; it != nil; it = it.next {
			items = append(items, it)
		}
	}
	c.tiers = sortTiers(c.Aging(), items, c.tiers, now, l.head.enqueued, c.opts.Order == v1.QueueWSPT)
	c.scratch = items
	return items
}

// workClass buckets prefill work in half-octaves (a factor of about 1.41):
// work within one class is treated as equal and served in arrival order.
// Token counts are estimates (an approximate tokenizer, a cache that moved),
// so strict shortest-first would let a document estimated a few tokens
// shorter pass an older one again and again until it times out.
func workClass(work int) int { return int(math.Floor(2 * math.Log2(float64(max(work, 1))))) }

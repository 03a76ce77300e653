package admission

import "time"

// Release removes and returns, in priority order then FIFO, every queued item
// for which canDispatch returns true. An item that cannot go does not hold back
// a later one that can (no head-of-line blocking). Items already past their
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
	var out []*Item[T]
	for _, l := range c.levels {
		for it := l.head; it != nil; {
			next := it.next
			if now.Before(it.deadline) && canDispatch(it) {
				c.unlink(it)
				out = append(out, it)
			}
			it = next
		}
	}
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

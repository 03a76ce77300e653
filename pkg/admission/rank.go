package admission

import (
	"time"

	v1 "github.com/kvpick/kvpick/api/v1alpha1"
)

// Rank is a queued request's place in release order, comparable across
// queues: picker replicas exchange ranks so that the fleet's queued requests
// go in one order, not in one order per replica.
type Rank struct {
	// Priority: higher goes first.
	Priority int
	// Class is the wspt work class (smaller goes first); 0 for every item
	// under fcfs.
	Class int
	// Enqueued breaks ties: earlier goes first.
	Enqueued time.Time
}

// Before reports whether a goes before b.
func (a Rank) Before(b Rank) bool { return a.BeforeBy(b, 0) }

// BeforeAt is BeforeBy with g's tiers at now between the class and the
// arrival order, as the queue orders its own items (Core.Release).
func (a Rank) BeforeAt(b Rank, now time.Time, g Aging, slack time.Duration) bool {
	if a.Priority == b.Priority && a.Class == b.Class {
		if ta, tb := g.tier(now, a.Enqueued), g.tier(now, b.Enqueued); ta != tb {
			return ta < tb
		}
	}
	return a.BeforeBy(b, slack)
}

// BeforeBy reports whether a goes before b by a margin: a higher priority, a
// smaller class, or, when both are equal, enqueued more than slack earlier.
// Replicas compare ranks a sync delay apart, and giving way to a peer's
// request enqueued a moment earlier costs the room's idle time until the
// peer hears of it, for an order that was a coin toss.
func (a Rank) BeforeBy(b Rank, slack time.Duration) bool {
	switch {
	case a.Priority != b.Priority:
		return a.Priority > b.Priority
	case a.Class != b.Class:
		return a.Class < b.Class
	}
	return a.Enqueued.Add(slack).Before(b.Enqueued)
}

// Rank is the item's place in its queue's release order. Only meaningful
// while it is queued; not safe concurrently with its Core's methods.
func (it *Item[T]) Rank() Rank {
	r := Rank{Priority: it.Priority, Enqueued: it.enqueued}
	if it.owner != nil && it.owner.opts.Order == v1.QueueWSPT {
		r.Class = it.class
	}
	return r
}

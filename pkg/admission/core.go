// Package admission decides WHEN a request is dispatched: a request waits in a
// bounded priority queue while every endpoint eligible for it is above the
// queue threshold, and leaves when capacity frees, to be scored afresh by the
// caller. Where it goes is the scheduler's decision, not this package's.
//
// Core is the deterministic queue, driven by explicit times, so the same code
// runs in virtual time (the routebench simulator) and, wrapped by Queue, in
// real time (the ext_proc server).
package admission

import (
	"errors"
	"sort"
	"time"

	v1 "github.com/kvpick/kvpick/api/v1alpha1"
)

// defaults are the configuration's (api/v1alpha1, their one source), applied
// to zero or negative Options fields.
var defaults = v1.Default().Admission

// Options bound the queue. Zero values take the defaults.
type Options struct {
	// MaxLength is the most requests queued at once; beyond it an arrival is
	// rejected (429 queue_full) or displaces a lower-priority sheddable one.
	MaxLength int
	// MaxWait is the longest a request waits before 429 queue_timeout.
	MaxWait time.Duration
	// Pool labels the Queue's metrics; Core ignores it.
	Pool string
	// Order is the release order within a priority: v1.QueueFCFS (arrival
	// order, the default) or v1.QueueWSPT (least Work first, arrival order
	// among work of one size class: Smith's rule with equal weights, which
	// minimises the mean wait; a long prompt waits while short ones keep
	// the fleet full, up to MaxWait).
	Order string
	// LateAfter is the wait past which a request yields to requests that
	// have waited less (see Aging; 0: arrival order only).
	LateAfter time.Duration
	// LateWindow ends the tiers when the queue has not drained for that
	// long (see Aging.Window; 0: never).
	LateWindow time.Duration
}

// FromConfig is the queue's options as a configuration sets them.
func FromConfig(a v1.Admission) Options {
	return Options{MaxLength: a.MaxQueueLength, MaxWait: a.MaxQueueWait.Duration, Order: a.QueuePolicy,
		LateAfter: a.LateAfterOrOff(), LateWindow: a.LateWindowOrNone()}
}

// Aging is the tiering these options set (see Aging), with no backlog yet.
func (o Options) Aging() Aging {
	return Aging{LateAfter: o.LateAfter, MaxWait: o.MaxWait, Window: o.LateWindow}
}

func (o Options) withDefaults() Options {
	if o.MaxLength <= 0 {
		o.MaxLength = defaults.MaxQueueLength
	}
	if o.MaxWait <= 0 {
		o.MaxWait = defaults.MaxQueueWait.Duration
	}
	if o.Order == "" {
		o.Order = defaults.QueuePolicy
	}
	return o
}

// Misuse errors from Push.
var (
	ErrNilItem       = errors.New("admission: nil item")
	ErrAlreadyQueued = errors.New("admission: item is already queued")
)

// Core is the deterministic admission queue: priority first (higher first),
// then arrival order. It holds no goroutines and reads no clock; every time is
// passed in. Not safe for concurrent use (Queue locks it).
type Core[T any] struct {
	opts   Options
	levels []*level[T] // descending priority, none empty between calls
	n      int
	tokens int
	seq    uint64
	last   time.Time // latest push time, to keep each level's FIFO in time order
	// scratch holds one level's items in release order during Release;
	// tiers is sortTiers' scratch.
	scratch, tiers []*Item[T]
	// pass identifies the Release pass under way (see Item.Pass).
	pass uint64
	// backlog is when the queue last went from empty to waiting (Aging.Since).
	backlog time.Time
}

// NewCore returns an empty queue with o's limits (defaults for zero fields).
func NewCore[T any](o Options) *Core[T] { return &Core[T]{opts: o.withDefaults()} }

// Options returns the limits in force, defaults applied.
func (c *Core[T]) Options() Options { return c.opts }

// Len is the number of queued items.
func (c *Core[T]) Len() int { return c.n }

// Aging is the tiering in force, its surge window measured from this
// queue's current backlog.
func (c *Core[T]) Aging() Aging {
	g := c.opts.Aging()
	g.Since = c.backlog
	return g
}

// PendingTokens is the sum of the queued items' ISLTokens (negatives count 0).
func (c *Core[T]) PendingTokens() int { return c.tokens }

// Push queues it at now. When the queue is full, a sheddable queued item
// (priority < 0) of lower priority than it is evicted — the newest of the
// lowest priority — and returned, for the caller to answer 429 request_shed;
// otherwise it is rejected with a 429 queue_full *apierr.Error naming the
// limit. A now earlier than a previous push counts as that previous time, so
// FIFO order and expiry order agree. Returns ErrNilItem or ErrAlreadyQueued on
// misuse.
func (c *Core[T]) Push(it *Item[T], now time.Time) (evicted *Item[T], err error) {
	if it == nil {
		return nil, ErrNilItem
	}
	if it.owner != nil {
		return nil, ErrAlreadyQueued
	}
	if c.n >= c.opts.MaxLength {
		evicted = c.victim(it.Priority)
		if evicted == nil {
			return nil, errQueueFull(c.opts.MaxLength)
		}
		c.unlink(evicted)
	}
	c.insert(it, now)
	if evicted != nil {
		c.compact()
	}
	return evicted, nil
}

// Arrive is the arrival step Queue.Admit runs, for a simulator to mirror:
// TryNow, else Push. After a push the caller must run Release(now,
// canDispatch), as Queue does, so an arrival that can go although older items
// cannot is not held until the next capacity change.
func (c *Core[T]) Arrive(it *Item[T], now time.Time, canDispatch func(*Item[T]) bool) (dispatched bool, evicted *Item[T], err error) {
	if c.TryNow(it, canDispatch) {
		return true, nil, nil
	}
	evicted, err = c.Push(it, now)
	return false, evicted, err
}

// TryNow is the fast path of an arrival: when nothing is queued and
// canDispatch(it) passes (reserving, see Release), it may be dispatched at
// once and is never queued. It reads no time, so a real-time caller only
// reads the clock when the item has to wait.
func (c *Core[T]) TryNow(it *Item[T], canDispatch func(*Item[T]) bool) bool {
	return it != nil && it.owner == nil && c.n == 0 && canDispatch != nil && canDispatch(it)
}

// victim is the item a full queue sheds for an arrival of priority prio: the
// newest of the lowest priority, if that priority is sheddable and below prio.
func (c *Core[T]) victim(prio int) *Item[T] {
	if len(c.levels) == 0 {
		return nil
	}
	low := c.levels[len(c.levels)-1]
	if low.prio >= 0 || low.prio >= prio {
		return nil
	}
	return low.tail
}

func (c *Core[T]) insert(it *Item[T], now time.Time) {
	if now.Before(c.last) {
		now = c.last
	}
	c.last = now
	if c.n == 0 {
		c.backlog = now
	}
	c.seq++
	it.owner, it.seq, it.enqueued = c, c.seq, now
	it.deadline = now.Add(c.opts.MaxWait)
	it.tokens = max(it.ISLTokens, 0)
	it.class = workClass(it.work())
	c.levelFor(it.Priority).append(it)
	c.n++
	c.tokens += it.tokens
}

// levelFor finds or creates the level of priority prio.
func (c *Core[T]) levelFor(prio int) *level[T] {
	i := sort.Search(len(c.levels), func(i int) bool { return c.levels[i].prio <= prio })
	if i < len(c.levels) && c.levels[i].prio == prio {
		return c.levels[i]
	}
	l := &level[T]{prio: prio}
	c.levels = append(c.levels, nil)
	copy(c.levels[i+1:], c.levels[i:])
	c.levels[i] = l
	return l
}

// unlink takes a queued item out; empty levels are dropped later by compact,
// so walks over c.levels stay valid while items leave.
func (c *Core[T]) unlink(it *Item[T]) {
	it.lvl.unlink(it)
	it.owner = nil
	c.n--
	c.tokens -= it.tokens
}

// compact drops empty levels, keeping order.
func (c *Core[T]) compact() {
	kept := c.levels[:0]
	for _, l := range c.levels {
		if !l.empty() {
			kept = append(kept, l)
		}
	}
	clear(c.levels[len(kept):])
	c.levels = kept
}

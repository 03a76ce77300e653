package admission

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// Queue is the real-time admission queue around a Core: Admit blocks the
// calling goroutine until its request is dispatched or turned away. One timer
// per Queue enforces MaxWait, and at most one goroutine at a time runs release
// passes (drain, started by Notify when none runs). Safe for concurrent use.
type Queue[T any] struct {
	mu          sync.Mutex
	core        *Core[T]
	canDispatch func(*Item[T]) bool
	workOf      func(T) int // fills Item.Work for an item that must wait (see SetWork)
	closed      bool
	timer       *time.Timer
	armed       time.Time // deadline the timer is set for; zero when unset
	m           *queueMetrics

	n       atomic.Int64 // core.Len(), readable without the lock
	dirty   atomic.Bool  // a Notify arrived since the last Release began
	running atomic.Bool  // a drain goroutine is running
}

// NewQueue returns a Queue with o's limits whose requests are dispatched when
// canDispatch returns true for them. canDispatch follows the reservation
// contract of Core.Release: it is only ever called with the Queue's lock held
// (so calls never overlap), must reserve the capacity of an item it passes,
// and must not call back into the Queue. o.Pool labels the metrics.
func NewQueue[T any](o Options, canDispatch func(*Item[T]) bool) *Queue[T] {
	return &Queue[T]{core: NewCore[T](o), canDispatch: canDispatch, m: newQueueMetrics(o.Pool)}
}

// SetWork has the queue fill an item's Work (the wspt order's key) with
// f(Value) when the item must wait and its Work is unset: a request that is
// dispatched at once never pays for f (an index lookup, for the router). f
// runs with the Queue's lock held, as canDispatch does. Call before use.
func (q *Queue[T]) SetWork(f func(T) int) { q.workOf = f }

// Len is the number of requests waiting.
func (q *Queue[T]) Len() int { return int(q.n.Load()) }

// PendingTokens is the sum of the waiting requests' prompt tokens.
func (q *Queue[T]) PendingTokens() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.core.PendingTokens()
}

// Admit returns nil when it may be dispatched: at once if nothing is queued
// and canDispatch(it) passes, else after waiting in the queue. nil means
// canDispatch returned true for it, so the caller owns its reservation even if
// ctx ended meanwhile. Otherwise it returns a 429 *apierr.Error (queue_full,
// request_shed, queue_timeout), a 503 *apierr.Error after Close, or ctx.Err()
// wrapped when the caller went away — the item leaves the queue at once.
// Misuse (nil item, item already queued) returns ErrNilItem or ErrAlreadyQueued.
func (q *Queue[T]) Admit(ctx context.Context, it *Item[T]) error {
	if it == nil {
		return ErrNilItem
	}
	if err := ctx.Err(); err != nil {
		q.m.rejected(reasonCanceled)
		return fmt.Errorf("admission: caller gone before admission: %w", err)
	}
	wake, done, err := q.enter(it)
	if done {
		return err
	}
	select {
	case err := <-wake:
		return err
	case <-ctx.Done():
		return q.abandon(ctx, it, wake)
	}
}

// enter takes the fast path or queues it; done reports that Admit has its
// answer in err without waiting on the returned channel.
func (q *Queue[T]) enter(it *Item[T]) (wake <-chan error, done bool, err error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		q.m.rejected(reasonShutdown)
		return nil, true, errShutdown()
	}
	if q.core.TryNow(it, q.canDispatch) {
		return nil, true, nil
	}
	if q.workOf != nil && it.Work == 0 {
		it.Work = q.workOf(it.Value)
	}
	now := time.Now() // only here: the clock is slow on some VMs
	evicted, err := q.core.Push(it, now)
	if err != nil {
		if isFull(err) {
			q.m.rejected(reasonFull)
		}
		return nil, true, err
	}
	ch := make(chan error, 1)
	it.wake = ch
	q.queued(now, evicted)
	return ch, false, nil
}

// queued runs after a push: shed the evicted item, then have a release pass
// run, as a Notify does: the arrival may go now although the items before it
// cannot (no head of line), and those may go too, since what admits a request
// is not only capacity that freed (which notifies) but also the KV index,
// which changes without a notification (a prefix cached since makes a
// request warm, judged at the affinity threshold). In routebench, asking the
// arrival alone had kv's burst p95 at 0.93 s against 0.76 s at seed 1. The
// pass runs on the queue's goroutine, so the arrival's request path never
// pays for a pass over a long queue.
func (q *Queue[T]) queued(now time.Time, evicted *Item[T]) {
	// Publish the length before the pass: a Notify that saw an empty queue
	// must then be ordered before the pass's reads of the caller's state.
	q.publish()
	if evicted != nil {
		q.finish(evicted, now, errShed(q.core.opts.MaxLength), reasonShed)
	}
	q.arm()
	q.Notify()
}

// abandon handles ctx ending while it waits. If it already left the queue
// (dispatched, expired, shed, closed) that answer stands: it is already in the
// channel, sent under the lock.
func (q *Queue[T]) abandon(ctx context.Context, it *Item[T], wake <-chan error) error {
	q.mu.Lock()
	removed := q.core.Remove(it)
	if removed {
		q.m.left(reasonCanceled, time.Since(it.enqueued))
		it.wake = nil
		q.publish()
	}
	q.mu.Unlock()
	if !removed {
		return <-wake
	}
	return fmt.Errorf("admission: caller gone while queued: %w", ctx.Err())
}

// Notify tells the queue capacity may have freed (a prefill completed, a
// request ended, load data changed) and has a release pass run. It returns
// at once: the pass runs on a goroutine of the queue's, never the caller's,
// so a response stream or a peer's event stream that frees capacity does not
// wait for a pass over a long queue. Notifications that arrive while a pass
// runs coalesce into one more pass. Safe from any goroutine, and from inside
// canDispatch.
func (q *Queue[T]) Notify() {
	if q.n.Load() == 0 {
		return
	}
	q.dirty.Store(true)
	if q.running.CompareAndSwap(false, true) {
		go q.drain()
	}
}

// drain runs release passes until no notification arrived during the last
// one. A pass costs a canDispatch call per waiting request; after a pass that
// took more than paceAbove the next one waits as long as it took, so with
// hundreds waiting and thousands of notifications a second the passes use
// at most about half a core, the rest of it left to the requests being served.
func (q *Queue[T]) drain() {
	for {
		for q.dirty.Swap(false) { // Swap (not Store): this pass observes the notifier's writes
			if took := q.ReleaseNow(); took > paceAbove {
				time.Sleep(took)
			}
		}
		q.running.Store(false)
		// A Notify between the Swap and the Store saw running set and left
		// its pass to this goroutine: run it unless another goroutine took over.
		if !q.dirty.Load() || !q.running.CompareAndSwap(false, true) {
			return
		}
	}
}

// paceAbove is the pass length under which drain does not pace: a sleep
// that short costs more than the pass (a VM's timer wakes up to a
// millisecond late).
const paceAbove = 200 * time.Microsecond

// ReleaseNow runs one release pass on the caller's goroutine, the pass a
// Notify has the queue's goroutine run, and returns how long it took
// (benchmarks time it).
func (q *Queue[T]) ReleaseNow() time.Duration {
	q.mu.Lock()
	now := time.Now()
	q.release(now)
	q.arm()
	q.mu.Unlock()
	took := time.Since(now)
	q.m.pass.Observe(took.Seconds())
	return took
}

// Close wakes every waiter with a 503 shutting-down error; later Admits get
// the same. Idempotent.
func (q *Queue[T]) Close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.closed = true
	now := time.Now()
	out := q.core.Drain()
	q.publish()
	for _, it := range out {
		q.finish(it, now, errShutdown(), reasonShutdown)
	}
	if q.timer != nil {
		q.timer.Stop()
	}
}

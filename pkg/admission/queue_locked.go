package admission

import (
	"time"

	"github.com/kvpick/kvpick/pkg/apierr"
)

// The methods in this file run with q.mu held.

// release dispatches every queued item canDispatch passes. Waiters are woken
// after publish, so a woken caller sees Len without its item.
func (q *Queue[T]) release(now time.Time) {
	out := q.core.Release(now, q.canDispatch)
	q.publish()
	for _, it := range out {
		q.finish(it, now, nil, "")
	}
}

// expire turns away the items past MaxWait; it runs on the timer.
func (q *Queue[T]) expire() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.armed = time.Time{}
	now := time.Now()
	out := q.core.Expire(now)
	q.publish()
	for _, it := range out {
		q.finish(it, now, errQueueTimeout(q.core.opts.MaxWait), reasonTimeout)
	}
	q.arm()
}

// finish answers the waiter of an item that has left the core. The channel
// has room for exactly this one answer.
func (q *Queue[T]) finish(it *Item[T], now time.Time, err *apierr.Error, reason string) {
	q.m.left(reason, now.Sub(it.enqueued))
	if it.wake == nil {
		return
	}
	if err != nil {
		it.wake <- err
	} else {
		it.wake <- nil
	}
	it.wake = nil
}

// arm sets the timer for the earliest deadline if it is not already set for
// that time or earlier. A timer left set for a deadline that has since left
// the queue fires harmlessly and re-arms.
func (q *Queue[T]) arm() {
	next, ok := q.core.NextDeadline()
	if !ok || (!q.armed.IsZero() && !next.Before(q.armed)) || q.closed {
		return
	}
	q.armed = next
	d := time.Until(next)
	if q.timer == nil {
		q.timer = time.AfterFunc(d, q.expire)
		return
	}
	q.timer.Reset(d)
}

// publish moves the length mirror and the gauges to the core's values.
func (q *Queue[T]) publish() {
	q.n.Store(int64(q.core.Len()))
	q.m.publish(q.core.Len(), q.core.PendingTokens())
}

package admission

import (
	"time"
)

// Aging sorts waiting requests into tiers by how long they have waited, ahead
// of arrival order: on time first, then late, except that a late request
// nearing MaxWait goes first again.
//
// Why: when a surge is more than the fleet can clear at once, somebody waits.
// In arrival order everyone after the surge waits a little less than the one
// before, so dozens of requests share the delay; a request that has already
// waited LateAfter is late whatever happens next, and letting the requests
// that can still be on time pass it keeps the delay on the few already late
// (the adaptive LIFO of "Fail at Scale", ACM Queue 2015, bounded by the
// deadline). Measured in routebench (brief-import, 30 documents in 5 s on two
// replicas, seeds 1-3): p99 9.1-10.0 s in arrival order, 7.05-7.31 s with
// LateAfter 8 s. The late requests pay for it: the worst waited 27 s, where
// arrival order's worst waited 14 s.
type Aging struct {
	// LateAfter is the wait past which a request is late (0: no tiers,
	// arrival order only).
	LateAfter time.Duration
	// MaxWait is the queue's timeout; a request in its final
	// 1/UrgentShare is urgent.
	MaxWait time.Duration
	// Window bounds a surge: the tiers apply only while the queue's backlog
	// (Since) is younger than Window (0: no bound). A backlog older than
	// that is a fleet running at or past its capacity, not a surge it will
	// clear: there a late request would yield to every newcomer until the
	// urgent mark, so it waits in arrival order instead.
	Window time.Duration
	// Since is when the queue last went from empty to waiting (zero:
	// unknown, no bound).
	Since time.Time
}

// UrgentShare sets the final part of MaxWait (1/UrgentShare of it) in which
// a late request goes first again, so that a request accepted is placed
// before it times out (5 s of the default 30 s: a release pass comes with
// every finished prefill, well under a second apart on a busy fleet).
const UrgentShare = 6

// Tiers, in release order.
const (
	tierUrgent = iota
	tierOnTime
	tierLate
)

func (g Aging) urgentAfter() time.Duration { return g.MaxWait - g.MaxWait/UrgentShare }

// On reports whether tiers are in use.
func (g Aging) On() bool { return g.LateAfter > 0 && g.LateAfter < g.urgentAfter() }

// onAt reports whether tiers are in use at now: on, and the backlog younger
// than Window.
func (g Aging) onAt(now time.Time) bool { return g.On() && !g.surgeOver(now) }

// surgeOver reports whether the backlog has outlived Window at now.
func (g Aging) surgeOver(now time.Time) bool {
	return g.Window > 0 && !g.Since.IsZero() && now.Sub(g.Since) >= g.Window
}

// tier is the tier at now of a request enqueued at enq.
func (g Aging) tier(now, enq time.Time) int {
	if !g.onAt(now) {
		return tierOnTime
	}
	switch w := now.Sub(enq); {
	case w >= g.urgentAfter():
		return tierUrgent
	case w >= g.LateAfter:
		return tierLate
	}
	return tierOnTime
}

// NextChange is when a request enqueued at enq next changes tier after now
// (zero: never, or tiers are off): it turns late, or urgent, or the surge
// window closes on the backlog.
func (g Aging) NextChange(now, enq time.Time) time.Time {
	if !g.onAt(now) {
		return time.Time{}
	}
	var next time.Time
	for _, t := range []time.Time{enq.Add(g.LateAfter), enq.Add(g.urgentAfter()), g.windowEnd()} {
		if t.After(now) && (next.IsZero() || t.Before(next)) {
			next = t
		}
	}
	return next
}

// windowEnd is when the backlog outlives Window (zero: no bound).
func (g Aging) windowEnd() time.Time {
	if g.Window <= 0 || g.Since.IsZero() {
		return time.Time{}
	}
	return g.Since.Add(g.Window)
}

// sortTiers orders items (already in class, then arrival order, or arrival
// order alone) by class when byClass, then tier, keeping arrival order within
// each: a stable partition of each class's run, linear in len(items), with
// tmp as scratch. It returns at once when the oldest item (the level's FIFO
// head) is still on time, the common case, so a queue nobody is late in pays
// nothing.
func sortTiers[T any](g Aging, items, tmp []*Item[T], now, oldest time.Time, byClass bool) []*Item[T] {
	if !g.onAt(now) || now.Sub(oldest) < g.LateAfter {
		return tmp
	}
	for i := 0; i < len(items); {
		j := i + 1
		for j < len(items) && (!byClass || items[j].class == items[i].class) {
			j++
		}
		tmp = tmp[:0]
		for _, want := range [...]int{tierUrgent, tierOnTime, tierLate} {
			for _, it := range items[i:j] {
				if g.tier(now, it.enqueued) == want {
					tmp = append(tmp, it)
				}
			}
		}
		copy(items[i:j], tmp)
		i = j
	}
	return tmp
}

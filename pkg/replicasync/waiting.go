package replicasync

import (
	"sort"
	"time"

	"github.com/kvpick/kvpick/pkg/admission"
	"github.com/kvpick/kvpick/pkg/telemetry"
)

// ownWait is one of this replica's requests waiting in its queue, for
// snapshots.
type ownWait struct {
	model string
	rank  admission.Rank
}

// peerWait is a peer's request waiting in the peer's queue.
type peerWait struct {
	model string
	rank  admission.Rank
	since time.Time // when it was applied here (this replica's clock)
}

// Waiting implements QueueOrder.
func (r *Replica) Waiting(id uint64, model string, rank admission.Rank) {
	r.mu.Lock()
	r.waits[id] = ownWait{model: model, rank: rank}
	r.emit(Event{Kind: KindWaiting, Request: id, At: rank.Enqueued, Model: model, Priority: rank.Priority, Class: rank.Class})
	r.mu.Unlock()
}

// Left implements QueueOrder.
func (r *Replica) Left(id uint64) {
	now := r.opts.Now()
	r.mu.Lock()
	if _, ok := r.waits[id]; ok {
		delete(r.waits, id)
		r.emit(Event{Kind: KindLeft, Request: id, At: now})
	}
	r.mu.Unlock()
}

// Ahead implements QueueOrder. It costs a map lookup: the best waiting rank
// per model is recomputed only after the peers' waiting requests changed.
func (r *Replica) Ahead(model string, rank admission.Rank) bool {
	r.rmu.Lock()
	defer r.rmu.Unlock()
	if r.bestDirty {
		r.rankBest()
	}
	best, ok := r.best[model]
	return ok && best.Before(rank)
}

// rankBest recomputes the first waiting rank per model. Callers hold r.rmu.
func (r *Replica) rankBest() {
	clear(r.best)
	for _, o := range r.origins {
		for _, w := range o.waits {
			if b, ok := r.best[w.model]; !ok || w.rank.Before(b) {
				r.best[w.model] = w.rank
			}
		}
	}
	r.bestDirty = false
}

// PeersWaiting is the number of peers' requests known to wait.
func (r *Replica) PeersWaiting() int {
	r.rmu.Lock()
	defer r.rmu.Unlock()
	return r.peersWaiting()
}

// peersWaiting counts peers' waiting requests. Callers hold r.rmu.
func (r *Replica) peersWaiting() int {
	n := 0
	for _, o := range r.origins {
		n += len(o.waits)
	}
	return n
}

// waiting applies a peer's KindWaiting. Callers hold r.rmu.
func (r *Replica) waiting(o *origin, ev *Event, now time.Time) {
	o.waits[ev.Request] = &peerWait{model: ev.Model, since: now,
		rank: admission.Rank{Priority: ev.Priority, Class: ev.Class, Enqueued: ev.At}}
	r.bestDirty = true
}

// left applies a peer's KindLeft. Callers hold r.rmu.
func (r *Replica) left(o *origin, ev *Event) bool {
	_, ok := o.waits[ev.Request]
	r.unwait(o, ev.Request)
	return ok
}

// unwait ends a peer request's wait, if it waited. Callers hold r.rmu.
func (r *Replica) unwait(o *origin, id uint64) {
	if _, ok := o.waits[id]; ok {
		delete(o.waits, id)
		r.bestDirty, r.waitsLeft = true, true
	}
}

// expireWaits drops peers' waits older than twice the queue's longest wait:
// their Added or Left was lost. Callers hold r.rmu.
func (r *Replica) expireWaits(now time.Time) {
	cutoff := now.Add(-2 * r.opts.MaxWait)
	for _, o := range r.origins {
		for id, w := range o.waits {
			if w.since.Before(cutoff) {
				r.unwait(o, id)
				telemetry.ReplicaSyncExpired.WithLabelValues("waiting").Inc()
			}
		}
	}
}

// takeWaitsLeft reports whether a peer's wait ended since the last call
// (this replica's queue may release what it held back). Callers hold r.rmu.
func (r *Replica) takeWaitsLeft() bool {
	left := r.waitsLeft
	r.waitsLeft = false
	return left
}

// notifyWaits runs the OnChange hook when a peer's wait ended. Call it
// without holding r.rmu: the hook re-enters the router's queue.
func (r *Replica) notifyWaits(left bool) {
	if left && r.opts.OnChange != nil {
		r.opts.OnChange()
	}
}

// snapshotWaits lists this replica's waiting requests as snapshot state, in
// id order. Callers hold r.mu.
func (r *Replica) snapshotWaits(evs []Event) []Event {
	ids := make([]uint64, 0, len(r.waits))
	for id := range r.waits {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	for _, id := range ids {
		w := r.waits[id]
		evs = append(evs, r.state(Event{Kind: KindWaiting, Request: id, At: w.rank.Enqueued, Model: w.model,
			Priority: w.rank.Priority, Class: w.rank.Class}))
	}
	return evs
}

package replicasync

import (
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/kvpick/kvpick/pkg/admission"
)

// ownWait is one of this replica's requests waiting in its queue, for
// snapshots.
type ownWait struct {
	model, endpoint string
	rank            admission.Rank
}

// Waiting implements QueueOrder. Called again for the same id (its
// endpoint changed), peers replace what they hold.
func (r *Replica) Waiting(id uint64, model, endpoint string, rank admission.Rank) {
	r.mu.Lock()
	r.queued[id] = ownWait{model: model, endpoint: endpoint, rank: rank}
	r.emit(Event{Kind: KindWaiting, Request: id, At: rank.Enqueued, Model: model, Endpoint: endpoint,
		Priority: rank.Priority, Class: rank.Class})
	r.mu.Unlock()
}

// Left implements QueueOrder.
func (r *Replica) Left(id uint64) {
	now := r.opts.Now()
	r.mu.Lock()
	if _, ok := r.queued[id]; ok {
		delete(r.queued, id)
		r.emit(Event{Kind: KindLeft, Request: id, At: now})
	}
	r.mu.Unlock()
}

// Ahead implements QueueOrder. It takes only the waits' own lock: the router
// calls it from its admission queue, which Apply re-enters (a peer's work
// changing notifies the queue) while holding the apply lock.
func (r *Replica) Ahead(model, endpoint string, anyToo bool, rank admission.Rank, g admission.Aging) bool {
	slack := r.QueueSlack() // read once: a peer's batch may move it meanwhile
	if r.suspends(slack) {
		return false
	}
	return r.waits.ahead(model, endpoint, anyToo, rank, slack, r.opts.Now(), g)
}

// PeersWaiting is the number of peers' requests known to wait.
func (r *Replica) PeersWaiting() int { return r.waits.count() }

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
	for _, id := range slices.Sorted(maps.Keys(r.queued)) {
		w := r.queued[id]
		evs = append(evs, r.state(Event{Kind: KindWaiting, Request: id, At: w.rank.Enqueued, Model: w.model,
			Endpoint: w.endpoint, Priority: w.rank.Priority, Class: w.rank.Class}))
	}
	return evs
}

// peerWaits is the peers' requests waiting in their admission queues, by
// origin. Its lock is a leaf: nothing is called while holding it, so the
// router's queue may ask it from inside Apply's notifications.
type peerWaits struct {
	mu     sync.Mutex
	by     map[string]map[uint64]*peerWait
	best   map[string]admission.Rank // first waiting rank per model, any endpoint (see ahead)
	target map[string]admission.Rank // first waiting rank per model and endpoint ("" : any)
	dirty  bool                      // best and target need recomputing
	next   time.Time                 // when a wait next changes tier (admission.Aging): recompute then too
	g      admission.Aging           // the tiers best and target were computed with
	left   bool                      // a wait ended since takeLeft last ran
}

// peerWait is a peer's request waiting in the peer's queue.
type peerWait struct {
	model, endpoint string // endpoint: the one it waits for room on ("": any)
	rank            admission.Rank
	since           time.Time // when it was applied here (this replica's clock)
}

func newPeerWaits() peerWaits {
	return peerWaits{by: map[string]map[uint64]*peerWait{}, best: map[string]admission.Rank{}, target: map[string]admission.Rank{}}
}

func targetKey(model, endpoint string) string { return model + "\x00" + endpoint }

// set records origin's request ev.Request as waiting (KindWaiting).
func (w *peerWaits) set(origin string, ev *Event, now time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	m := w.by[origin]
	if m == nil {
		m = map[uint64]*peerWait{}
		w.by[origin] = m
	}
	m[ev.Request] = &peerWait{model: ev.Model, endpoint: ev.Endpoint, since: now,
		rank: admission.Rank{Priority: ev.Priority, Class: ev.Class, Enqueued: ev.At}}
	w.dirty = true
}

// end ends a request's wait and reports whether it waited.
func (w *peerWaits) end(origin string, id uint64) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, ok := w.by[origin][id]; !ok {
		return false
	}
	delete(w.by[origin], id)
	w.dirty, w.left = true, true
	return true
}

// endAll ends every wait of origin (it restarted or is gone).
func (w *peerWaits) endAll(origin string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.by[origin]) > 0 {
		w.dirty, w.left = true, true
	}
	delete(w.by, origin)
}

// has reports whether origin has requests waiting.
func (w *peerWaits) has(origin string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.by[origin]) > 0
}

// expire ends the waits applied before cutoff (their end event was lost)
// and returns how many.
func (w *peerWaits) expire(cutoff time.Time) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, m := range w.by {
		for id, pw := range m {
			if pw.since.Before(cutoff) {
				delete(m, id)
				n++
			}
		}
	}
	if n > 0 {
		w.dirty, w.left = true, true
	}
	return n
}

// ahead reports whether a request for model waits that goes before rank
// (by slack, see admission.Rank.BeforeBy) and waits for room on endpoint, or (anyToo) for room on any endpoint;
// with endpoint "" (admitted pool-wide: it could go anywhere) any wait for
// the model counts. Ranks compare in g's tiers at now, as each queue orders
// its own. The first ranks are recomputed only after the waits changed or
// one of them changed tier.
func (w *peerWaits) ahead(model, endpoint string, anyToo bool, rank admission.Rank, slack time.Duration,
	now time.Time, g admission.Aging) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.dirty || w.g != g || !w.next.IsZero() && !now.Before(w.next) {
		w.g = g
		clear(w.best)
		clear(w.target)
		w.next = time.Time{}
		for _, m := range w.by {
			for _, pw := range m {
				keepFirst(w.best, pw.model, pw.rank, now, g)
				keepFirst(w.target, targetKey(pw.model, pw.endpoint), pw.rank, now, g)
				if t := g.NextChange(now, pw.rank.Enqueued); !t.IsZero() && (w.next.IsZero() || t.Before(w.next)) {
					w.next = t
				}
			}
		}
		w.dirty = false
	}
	before := func(m map[string]admission.Rank, k string) bool {
		b, ok := m[k]
		return ok && b.BeforeAt(rank, now, g, slack)
	}
	if endpoint == "" {
		return before(w.best, model)
	}
	return before(w.target, targetKey(model, endpoint)) || anyToo && before(w.target, targetKey(model, ""))
}

// keepFirst records r under k unless a rank before it (at now) is there.
func keepFirst(m map[string]admission.Rank, k string, r admission.Rank, now time.Time, g admission.Aging) {
	if b, ok := m[k]; !ok || r.BeforeAt(b, now, g, 0) {
		m[k] = r
	}
}

func (w *peerWaits) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, m := range w.by {
		n += len(m)
	}
	return n
}

// takeLeft reports whether a wait ended since the last call.
func (w *peerWaits) takeLeft() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	left := w.left
	w.left = false
	return left
}

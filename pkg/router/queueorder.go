package router

import (
	"time"

	v1 "github.com/kvpick/kvpick/api/v1alpha1"
	"github.com/kvpick/kvpick/pkg/admission"
	"github.com/kvpick/kvpick/pkg/replicasync"
	"github.com/kvpick/kvpick/pkg/telemetry"
)

// waitState is a request's part in the queue order shared with peer
// replicas. The admission queue's lock serialises every access.
type waitState struct {
	rank      admission.Rank
	aging     admission.Aging // the tiers of the queue it waits in
	queued    bool            // rank is set: the request waits in this replica's queue
	id        uint64          // announced to peers under this id (0: not announced); its Added reuses it
	held      time.Time       // since when it could go but a peer's request ranked first (zero: not held now)
	heldFor   time.Duration   // the holds it has ended, summed: queueYield bounds the sum, not each hold
	target    string          // the endpoint it waits for room on, per the gate's last refusal ("": any)
	announced string          // the target peers last heard
	cold      bool            // admitted as a request no endpoint holds cached (it could have gone anywhere with room)
}

// initQueueOrder turns the shared queue order on when the router queues and
// its replica sync can carry it.
func (r *Router) initQueueOrder() {
	if r.gate == nil || r.cfg.ReplicaSync.QueueOrder != v1.QueueOrderShared {
		return
	}
	if o, ok := r.deps.Sync.(replicasync.QueueOrder); ok {
		r.order = o
	}
}

// Waits notes that p waits in a queue at rank, tiered by g (the queue's
// Aging, fixed while p waits: its backlog lasts at least as long): the
// simulator's queue calls it (the real-time queue is read through
// canDispatch).
func (r *Router) Waits(p *Prepared, rank admission.Rank, g admission.Aging) {
	p.wait.rank, p.wait.aging, p.wait.queued = rank, g, true
	p.Req.Queued = true
}

// heldForPeers reports whether p, a queued request the gate would admit,
// must give way to a peer's request ranked before it that waits for room on
// the endpoint p was admitted on (or on any), and remembers for how long it
// has. A request on the fast path (nothing queued here) never gives way:
// queueing every arrival behind any wait a peer announced, as first built,
// cost routebench's shared-prefix at seed 3 +6 to +14 % of one replica's
// p95 over sync delays of 3-6 ms, against +3 % at most without.
// queueYield bounds the time p spends held, summed over its holds, so a
// peer's request that cannot use this capacity, or a wait its replica's
// view has not yet seen end, delays p by at most that much in all. (Bounding
// each hold alone let a request be held again after every refusal in
// between: in a real-time soak a replica's queue then starved to the 30 s
// timeout while its peers took the room.)
func (r *Router) heldForPeers(p *Prepared) bool {
	if r.order == nil || !p.wait.queued {
		return false
	}
	now := r.deps.Now()
	// Only a peer's request that could take the room p is about to take
	// holds it: one waiting for the endpoint p was admitted on, and, if p is
	// a cold request (admitted on an endpoint with room for any), one
	// waiting for room anywhere. A request admitted pool-wide (no endpoint
	// yet) gives way to any.
	if !r.order.Ahead(p.Req.Model, p.admittedOn, p.wait.cold, p.wait.rank, p.wait.aging) {
		p.wait.endHold(now, "peer_went")
		return false
	}
	if p.wait.held.IsZero() {
		p.wait.held = now
	}
	if p.wait.heldFor+now.Sub(p.wait.held) < r.cfg.ReplicaSync.QueueYield.Duration {
		return true
	}
	p.wait.endHold(now, "yield_spent")
	return false
}

// endHold ends the hold under way, if any, counting its time and how it
// ended (kvpick_replicasync_queue_hold_seconds).
func (w *waitState) endHold(now time.Time, outcome string) {
	if !w.held.IsZero() {
		d := now.Sub(w.held)
		w.heldFor += d
		w.held = time.Time{}
		telemetry.ReplicaSyncHolds.WithLabelValues(outcome).Observe(d.Seconds())
	}
}

// announce tells peers that p waits here, once it is queued, and again
// when the endpoint it waits for changes (its pick moved).
func (r *Router) announce(p *Prepared) {
	if r.order == nil || !p.wait.queued || p.wait.id != 0 && p.wait.announced == p.wait.target {
		return
	}
	if p.wait.id == 0 {
		p.wait.id = r.syncIDs.Add(1)
	}
	p.wait.announced = p.wait.target
	r.order.Waiting(p.wait.id, p.Req.Model, p.wait.target, p.wait.rank)
}

// Abandon tells peers that p left the queue without being routed (timed
// out, shed, client gone, or choosing failed). Idempotent; a no-op for a
// request never announced.
func (r *Router) Abandon(p *Prepared) {
	if r.order != nil && p.wait.id != 0 {
		r.order.Left(p.wait.id)
		p.wait.id = 0
	}
}

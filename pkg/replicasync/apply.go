package replicasync

import (
	"time"

	"github.com/kvpick/kvpick/pkg/activework"
	"github.com/kvpick/kvpick/pkg/kvindex"
	"github.com/kvpick/kvpick/pkg/telemetry"
)

// origin is what this replica knows of one peer replica's events.
type origin struct {
	peer  string // the transport's name for where its events last came from
	epoch uint64
	last  uint64    // highest Seq applied in this epoch
	seen  time.Time // last event applied
	reqs  map[uint64]*remoteRequest
	name  string
}

// remoteRequest is a peer's request counted in this replica's active work.
type remoteRequest struct {
	h        *activework.Handle
	endpoint string
	last     time.Time
	claim    kvindex.Claim // the predicted prefix its KindAdded recorded here
	bridge   bool          // claim is a bridge on the events path: taken back at the first token
}

// Apply applies events a peer sent (its own, or relayed ones naming their
// Origin), by the rules in the package comment. Invalid events are skipped
// and counted; nothing panics. Safe for concurrent use.
func (r *Replica) Apply(peer string, evs []Event) {
	now := r.opts.Now()
	// The batch is one change to the router: its queue must not release
	// after a freed before it has seen the added that follows (a peer that
	// freed room often filled it in the same breath), and one release pass
	// per batch costs less than one per event. The notification runs after
	// the lock, as the queue's pass may ask this replica for peers' waits.
	done := r.opts.Active.Defer()
	r.rmu.Lock()
	for i := range evs {
		r.applyOne(peer, &evs[i], now)
	}
	lag, timed := batchLag(evs, now)
	if timed {
		r.followLag(lag, now)
	}
	r.publish()
	left := r.waits.takeLeft()
	r.rmu.Unlock()
	done()
	r.notifyWaits(left)
	if timed {
		// Decisions closer together than this do not see each other.
		telemetry.ReplicaSyncLag.Observe(lag.Seconds())
	}
}

func (r *Replica) applyOne(peer string, ev *Event, now time.Time) {
	if reason := r.foreign(ev); reason != "" {
		telemetry.ReplicaSyncIgnored.WithLabelValues(reason).Inc()
		return
	}
	o := r.origins[ev.Origin]
	if o == nil {
		o = &origin{name: ev.Origin, reqs: map[uint64]*remoteRequest{}}
		r.origins[ev.Origin] = o
	}
	o.peer, o.seen = peer, now
	if !r.sequence(o, ev) {
		return
	}
	if reason := r.placeless(ev); reason != "" { // after sequence: its number was used
		telemetry.ReplicaSyncIgnored.WithLabelValues(reason).Inc()
		return
	}
	applied := true
	switch ev.Kind {
	case KindAdded:
		r.added(o, ev, now)
	case KindPrefillDone:
		applied = r.prefillDone(o, ev, now)
	case KindFreed:
		applied = r.freed(o, ev)
	case KindPredicted:
		r.predicted(ev, now)
	case KindWaiting:
		r.waits.set(o.name, ev, now)
	case KindLeft:
		applied = r.waits.end(o.name, ev.Request)
	case KindRefused:
		applied = r.refused(o, ev, now)
	}
	if applied {
		telemetry.ReplicaSyncApplied.WithLabelValues(ev.Kind.String()).Inc()
	} else {
		telemetry.ReplicaSyncIgnored.WithLabelValues("unknown_request").Inc()
	}
}

// foreign names why ev is not a peer's event to apply, or returns "".
func (r *Replica) foreign(ev *Event) string {
	switch {
	case ev.Origin == r.opts.ID:
		return "own"
	case ev.Origin == "" || !ev.Kind.Valid():
		return "invalid"
	}
	return ""
}

// placeless names why an event that places work or cache has no valid
// endpoint, or returns "".
func (r *Replica) placeless(ev *Event) string {
	if ev.Kind != KindAdded && ev.Kind != KindPredicted {
		return ""
	}
	switch {
	case ev.Endpoint == "":
		return "invalid"
	case r.opts.Set != nil && !r.known(ev.Endpoint):
		return "unknown_endpoint"
	}
	return ""
}

func (r *Replica) known(endpoint string) bool {
	_, ok := r.opts.Set.Snapshot().Index(endpoint)
	return ok
}

// sequence applies the epoch and Seq rules and reports whether ev is new.
func (r *Replica) sequence(o *origin, ev *Event) bool {
	if ev.Epoch != 0 && ev.Epoch != o.epoch {
		if ev.Epoch < o.epoch {
			telemetry.ReplicaSyncIgnored.WithLabelValues("stale").Inc()
			return false
		}
		if o.epoch != 0 {
			r.restart(o)
		}
		o.epoch = ev.Epoch
	}
	if ev.Seq == 0 {
		return true // snapshot state
	}
	if ev.Seq <= o.last {
		if ev.Epoch != 0 || ev.Seq != 1 {
			telemetry.ReplicaSyncDuplicate.Inc()
			return false
		}
		r.restart(o) // no epoch on the wire: Seq 1 again means it started over
	}
	if o.last != 0 && ev.Seq > o.last+1 {
		telemetry.ReplicaSyncMissed.Add(float64(ev.Seq - o.last - 1))
	}
	o.last = ev.Seq
	return true
}

// restart frees what an origin's previous incarnation added.
func (r *Replica) restart(o *origin) {
	telemetry.ReplicaSyncRestarts.Inc()
	r.freeAll(o, "restart")
	o.last = 0
}

func (r *Replica) freeAll(o *origin, reason string) {
	r.waits.endAll(o.name)
	for id, q := range o.reqs {
		r.free(q)
		delete(o.reqs, id)
		r.remote--
		telemetry.ReplicaSyncExpired.WithLabelValues(reason).Inc()
	}
}

func (r *Replica) added(o *origin, ev *Event, now time.Time) {
	r.waits.end(o.name, ev.Request) // it was waiting in the origin's queue: routed now
	if q := o.reqs[ev.Request]; q != nil {
		if q.endpoint == ev.Endpoint {
			q.last = now // a snapshot or resend of what is counted already
			return
		}
		q.h.Free()   // moved (a fallback served it): count it once, where it is
		r.retract(q) // the first endpoint failed it: it cached nothing there
		delete(o.reqs, ev.Request)
		r.remote--
	}
	var claim kvindex.Claim
	bridge := r.bridged(ev.Endpoint)
	if r.opts.Index != nil && len(ev.IndexChain) > 0 {
		if bridge {
			claim = r.opts.Index.ClaimUnreported(ev.Endpoint, ev.IndexChain, now)
		} else {
			claim = r.opts.Index.ClaimPredicted(ev.Endpoint, ev.IndexChain, now)
		}
	}
	h := r.opts.Active.Add(ev.Endpoint, ev.Work, now)
	o.reqs[ev.Request] = &remoteRequest{h: h, endpoint: ev.Endpoint, last: now, claim: claim, bridge: bridge}
	r.remote++
}

// refused takes back the predicted prefix of a peer's request its endpoint
// refused; its KindFreed follows and frees the work.
func (r *Replica) refused(o *origin, ev *Event, now time.Time) bool {
	q := o.reqs[ev.Request]
	if q == nil {
		return false
	}
	r.retract(q)
	q.last = now
	return true
}

// free ends a peer's request's work here. A bridge claim goes with it: it has
// no TTL of its own, and a request that ends without its first token seen
// (or whose end was lost) would otherwise keep it.
func (r *Replica) free(q *remoteRequest) {
	q.h.Free()
	if q.bridge {
		r.retract(q)
	}
}

func (r *Replica) retract(q *remoteRequest) {
	if r.opts.Index != nil {
		r.opts.Index.Retract(q.claim)
	}
	q.claim = kvindex.Claim{}
}

func (r *Replica) prefillDone(o *origin, ev *Event, now time.Time) bool {
	q := o.reqs[ev.Request]
	if q == nil {
		return false
	}
	q.h.PrefillDone(now)
	if q.bridge {
		r.retract(q) // the engine's events speak for what it stored now
	} else {
		q.claim = q.claim.Kept()
	}
	q.last = now
	return true
}

func (r *Replica) freed(o *origin, ev *Event) bool {
	q := o.reqs[ev.Request]
	if q == nil {
		return false
	}
	r.free(q)
	delete(o.reqs, ev.Request)
	r.remote--
	return true
}

// predicted records a snapshot's prefix with the time the origin recorded
// it (not later than now), so it expires when the origin's claim does.
func (r *Replica) predicted(ev *Event, now time.Time) {
	at := ev.At
	if at.After(now) || at.IsZero() {
		at = now
	}
	if r.opts.Index != nil && len(ev.IndexChain) > 0 && now.Sub(at) < r.opts.PredictedTTL {
		r.opts.Index.RecordPredicted(ev.Endpoint, ev.IndexChain, at)
	}
}

// ExpirePeer frees all work of the origins whose events came from peer (or
// that peer names): it died or was partitioned. Their sequence tracking is
// dropped too, so when the peer comes back its snapshot and live events
// apply afresh. Predicted prefixes stay until their TTL: the engines still
// hold that cache. Safe for concurrent use.
func (r *Replica) ExpirePeer(peer string) {
	done := r.opts.Active.Defer() // one release pass for all it frees, after the lock (as Apply)
	defer done()
	r.rmu.Lock()
	for name, o := range r.origins {
		if name == peer || o.peer == peer {
			r.freeAll(o, "peer")
			delete(r.origins, name)
		}
	}
	r.publish()
	left := r.waits.takeLeft()
	r.rmu.Unlock()
	r.notifyWaits(left)
}

// Tick is the periodic upkeep (the router's Tick calls it, in real and
// virtual time): peers' requests with no event for the orphan TTL are freed
// (their Freed was lost), origins silent that long with nothing in flight
// are forgotten, and this replica's own requests the router lost track of
// are ended towards the peers.
func (r *Replica) Tick(now time.Time) {
	cutoff := now.Add(-r.opts.Sync.OrphanTTL.Duration)
	done := r.opts.Active.Defer() // one release pass for all it frees, after the lock (as Apply)
	defer done()
	r.rmu.Lock()
	for name, o := range r.origins {
		for id, q := range o.reqs {
			if q.last.Before(cutoff) {
				r.free(q)
				delete(o.reqs, id)
				r.remote--
				telemetry.ReplicaSyncExpired.WithLabelValues("orphan").Inc()
			}
		}
		if len(o.reqs) == 0 && !r.waits.has(o.name) && o.seen.Before(cutoff) {
			delete(r.origins, name)
		}
	}
	if n := r.waits.expire(now.Add(-2 * r.opts.MaxWait)); n > 0 {
		telemetry.ReplicaSyncExpired.WithLabelValues("waiting").Add(float64(n))
	}
	r.publish()
	left := r.waits.takeLeft()
	r.rmu.Unlock()
	r.notifyWaits(left)
	if n := r.expireOwn(now); n > 0 {
		r.opts.Log.Info("ended own requests the router lost track of towards peers", "requests", n)
	}
}

// RemoteInFlight is the number of peers' requests counted here.
func (r *Replica) RemoteInFlight() int {
	r.rmu.Lock()
	defer r.rmu.Unlock()
	return r.remote
}

// publish mirrors the apply side into its gauges. Callers hold r.rmu.
func (r *Replica) publish() {
	telemetry.ReplicaSyncPeers.Set(float64(len(r.origins)))
	telemetry.ReplicaSyncRemoteInFlight.Set(float64(r.remote))
	telemetry.ReplicaSyncPeerWaiting.Set(float64(r.waits.count()))
}

package router

import (
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kvpick/kvpick/pkg/admission"
	"github.com/kvpick/kvpick/pkg/scheduler"
)

// canDispatch is the admission queue's predicate for a request: queued, or
// on the fast path (not queued yet). A refusal that holds for every request
// of p's eligibility group (no eligible endpoint has room) is passed on, so
// the queue does not ask the rest of the group in this pass.
func (r *Router) canDispatch(it *admission.Item[*Prepared]) bool {
	if it.Queued() {
		r.Waits(it.Value, it.Rank(), it.Aging())
	}
	it.Value.pass = it.Pass()
	ok := r.Admissible(it.Value)
	it.Value.pass = 0
	if !ok && it.Value.groupFull {
		it.RefuseGroup()
	}
	return ok
}

// Admissible reports whether p may be dispatched now: on the endpoint the
// scheduler picks for it (admitPicked), or, for a session or outside kv mode,
// the queue-threshold gate over the endpoints eligible for it (busy
// endpoints count as full: with queueing on, a fleet that is all busy holds
// requests in the queue, bounded by its length and wait, instead of
// answering 503 at once). When it returns true it has reserved p's prompt
// tokens on an endpoint until p is chosen (active work counts them from
// then) or fails. Callers that run their own queue (the virtual-time
// simulator drives admission.Core) call it directly, and Waits for a
// request they queue. With the shared queue order (queueorder.go) p is also
// held back while a peer replica has a request ranked before it waiting,
// and peers hear when p starts to wait.
func (r *Router) Admissible(p *Prepared) bool {
	p.groupFull = false
	if r.gate == nil {
		return true
	}
	if !r.gateAdmits(p) {
		if !p.wait.held.IsZero() { // no clock read for the many refusals of requests never held
			p.wait.endHold(r.deps.Now(), "room_taken")
		}
		r.announce(p)
		return false
	}
	if r.heldForPeers(p) {
		r.gate.Release(p)
		p.admittedOn = ""
		r.announce(p)
		return false
	}
	return true
}

// gateAdmits is the threshold gate: it reserves p's tokens and reports true,
// or reports false and sets p.groupFull when no eligible endpoint has room
// under the loosest threshold that applies (then no request of p's group
// could pass either). That check reads load only, so a long queue in a full
// fleet costs a few microseconds per notification, not a pick per request.
func (r *Router) gateAdmits(p *Prepared) bool {
	p.wait.target = "" // any endpoint, unless the pick says which
	if r.picksAtAdmission(p) && r.cold.full(p.pass, p.group) && r.uncachedEverywhere(p) {
		return false // as below, without reading the fleet again
	}
	buf := candBufs.Get().(*[]scheduler.Candidate)
	defer func() { clear(*buf); candBufs.Put(buf) }()
	*buf = states(r.deps.Set.Snapshot(), r.deps.Active, *buf)
	eligible, err := r.sched.Eligible(&p.Req, *buf)
	if err != nil {
		return true // let choosing report the cause
	}
	loads := make([]admission.Load, len(eligible))
	for i := range eligible {
		c := &eligible[i]
		loads[i] = admission.Load{Endpoint: c.Key(), PrefillTokens: c.Active.PrefillTokens,
			MaxBatched: scheduler.MaxBatched(c), Busy: r.sched.Busy(c)}
	}
	loosest := r.gate.Threshold()
	if a := r.cfg.Admission.AffinityThreshold; a != nil && *a > loosest {
		loosest = *a
	}
	if !r.gate.Room(loads, loosest) {
		p.groupFull = true
		return false
	}
	if r.picksAtAdmission(p) && !r.gate.Room(loads, r.gate.Threshold()) {
		r.cold.mark(p.pass, p.group)
		if r.uncachedEverywhere(p) {
			return false // what admitPicked answers a cold request then, without scoring it
		}
	}
	if admit, ok := r.admitPicked(p); ok {
		return admit
	}
	// The pool-wide rule reads load and eligibility only: the prefix lookup
	// and the rates are choose's, once the request may go. It answers every
	// request of p's group alike.
	if !r.gate.Admit(p, p.Req.PromptTokens, loads) {
		p.groupFull = true
		return false
	}
	return true
}

// unreserve drops p's admission reservation, if any.
func (r *Router) unreserve(p *Prepared) {
	if r.gate != nil {
		r.gate.Release(p)
	}
}

// PrefillWork is p's prompt tokens that no endpoint holds cached, per the
// index: the wspt queue order's key (Dynamo's new_tokens: the prompt less
// its best overlap).
func (r *Router) PrefillWork(p *Prepared) int {
	best := 0
	if len(p.IndexChain) > 0 {
		for _, o := range r.deps.Index.MatchCredited(p.IndexChain, r.deps.Now(), r.tiers, nil) {
			best = max(best, o.Blocks*r.stride)
		}
	}
	return max(p.Req.PromptTokens-best*p.Req.BlockSize, 1)
}

// eligibilityGroup names the requests the gate answers alike: the same
// model, adapter and subset hint make the same endpoints eligible (see
// admission.Item.Group), and a session is judged by the pool-wide rule, not
// at its pick, so sessions form groups of their own. Groups without a
// subset hint are interned (few: models times adapters), so a release pass
// over a long queue compares them by pointer; subset hints are per request
// and are not.
func (p *Prepared) eligibilityGroup() string {
	g := p.Req.Model + "\x00" + p.Req.LoRA
	if p.Session != "" {
		g += "\x00session"
	}
	if p.Req.SubsetPresent {
		return g + "\x00" + strings.Join(p.Req.Subset, ",")
	}
	if v, ok := groupNames.Load(g); ok {
		return v.(string)
	}
	if groupCount.Load() >= maxGroupNames {
		return g // a flood of made-up model names: compared by bytes, never kept
	}
	v, loaded := groupNames.LoadOrStore(g, g)
	if !loaded {
		groupCount.Add(1)
	}
	return v.(string)
}

// groupNames interns eligibility groups, at most maxGroupNames of them: a
// request names its model before anything checks the pool serves it.
var (
	groupNames sync.Map
	groupCount atomic.Int64
)

const maxGroupNames = 4096

// uncachedEverywhere reports whether no endpoint holds a block of p's
// prompt per the index (at any of its block sizes): admitPicked's cold case.
func (r *Router) uncachedEverywhere(p *Prepared) bool {
	// The clock is read only when a match must be asked: on a VM clock a
	// read per queued request per pass was a fifth of a soak replica's CPU.
	var now time.Time
	held := func(chain []uint64) bool {
		if !r.deps.Index.MayMatch(chain, r.tiers) {
			return false
		}
		if now.IsZero() {
			now = r.deps.Now()
		}
		return len(r.deps.Index.MatchCredited(chain, now, r.tiers, nil)) > 0
	}
	if held(p.IndexChain) {
		return false
	}
	for _, c := range p.sized {
		if held(c.chain) {
			return false
		}
	}
	return true
}

package router

import (
	"github.com/kvpick/kvpick/pkg/admission"
	"github.com/kvpick/kvpick/pkg/scheduler"
)

// canDispatch is the admission queue's predicate for a queued request.
func (r *Router) canDispatch(it *admission.Item[*Prepared]) bool { return r.Admissible(it.Value) }

// Admissible reports whether p may be dispatched now: on the endpoint the
// scheduler picks for it (admitPicked), or, for a session, the queue-threshold
// gate over the endpoints eligible for it (busy endpoints count as full: with
// queueing on, a fleet that is all busy holds requests in the queue, bounded
// by its length and wait, instead of answering 503 at once). When it returns
// true it has reserved p's prompt tokens on an endpoint until p is chosen
// (active work counts them from then) or fails. Callers that run their own
// queue (the virtual-time simulator drives admission.Core) call it directly.
func (r *Router) Admissible(p *Prepared) bool {
	if r.gate == nil {
		return true
	}
	if admit, ok := r.admitPicked(p); ok {
		return admit
	}
	// The pool-wide gate reads load and eligibility only: the prefix lookup
	// and the rates are choose's, once the request may go.
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
	return r.gate.Admit(p, p.Req.PromptTokens, loads)
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

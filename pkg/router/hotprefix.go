package router

import (
	"github.com/kvpick/kvpick/pkg/scheduler"
	"github.com/kvpick/kvpick/pkg/telemetry"
)

// The time cost's hot-prefix rule (router.kvCost.hotPrefixRequests) reads
// how many requests in flight share a request's prefix on its holders; the
// router fills that in and counts the copies made.

// fillSharers sets, on the candidates holding the longest prefix of p, how
// many requests in flight there share it (this picker's, and its synced
// peers' as replica sync accounts them).
func (r *Router) fillSharers(p *Prepared, cands []scheduler.Candidate) {
	held := scheduler.LongestHeld(cands)
	for i := range cands {
		if held > 0 && cands[i].CachedBlocks == held {
			cands[i].Sharers = r.deps.Active.Sharers(cands[i].Key(), p.Chain, held)
		}
	}
}

// countCopy counts a decision that sends p, whose longest cached prefix is
// hot on its holders or popular (popular.go), to an endpoint that does not
// hold it: another copy (kvpick_router_hot_prefix_copies_total), whichever
// term of the cost chose it.
func (r *Router) countCopy(p *Prepared, cands []scheduler.Candidate, primary *scheduler.Candidate) {
	held := 0
	if r.sharers && !p.Req.Queued {
		held = scheduler.HotPrefix(cands, *r.cfg.Router.KVCost.HotPrefixRequests)
	}
	if held == 0 && p.Req.Popular {
		held = scheduler.LongestHeld(cands)
	}
	if primary.CachedBlocks < held {
		telemetry.HotPrefixCopies.WithLabelValues(r.deps.Pool).Inc()
	}
}

package router

import (
	v1 "github.com/kvpick/kvpick/api/v1alpha1"
	"github.com/kvpick/kvpick/pkg/admission"
	"github.com/kvpick/kvpick/pkg/scheduler"
)

// admitPicked is the admission gate for a request without a session: the
// scheduler picks its endpoint now, counting the tokens other admitted
// requests have reserved as active prefill, and the request goes when that
// endpoint has room, to that endpoint (choose keeps it as the primary). A
// request some endpoint holds cached is judged on the endpoint its cost
// picks, at admission.affinityThreshold; one no endpoint holds cached picks
// among the endpoints under admission.queueThreshold. The pool-wide rule it
// replaces let a request pass on one endpoint's room and then go where its
// cache was, to queue in that engine behind a long prefill, out of reach of
// the picker's queue order. ok is false where the rule does not apply (a
// mode other than kv, whose picks need not repeat: round-robin's would
// advance twice per request; a session, whose endpoint is the session's; no
// affinity threshold; nothing to schedule on): then the pool-wide rule decides.
func (r *Router) admitPicked(p *Prepared) (admit, ok bool) {
	if !r.picksAtAdmission(p) {
		return false, false
	}
	affinity := r.cfg.Admission.AffinityThreshold
	buf := candBufs.Get().(*[]scheduler.Candidate)
	defer func() { clear(*buf); candBufs.Put(buf) }()
	cands := r.candidates(p, *buf)
	*buf = cands
	cold := true
	for i := range cands {
		cands[i].Active.PrefillTokens += r.gate.Reserved(cands[i].Key())
		cold = cold && cands[i].CachedBlocks == 0
	}
	threshold := *affinity
	if cold {
		threshold = r.gate.Threshold()
		if cands = r.roomy(cands, threshold); len(cands) == 0 {
			return false, true
		}
	}
	chosen, _, err := r.sched.Schedule(&p.Req, cands)
	if err != nil {
		return false, false // busy everywhere, or no endpoint: the pool-wide rule says which
	}
	c := &chosen[0]
	l := admission.Load{Endpoint: c.Key(), PrefillTokens: c.Active.PrefillTokens - r.gate.Reserved(c.Key()),
		MaxBatched: scheduler.MaxBatched(c), Busy: r.sched.Busy(c)}
	if !r.gate.AdmitTo(p, p.Req.PromptTokens, l, threshold) {
		if !cold {
			p.wait.target = c.Key() // it waits for room there, where its cache is
		}
		return false, true
	}
	p.admittedOn, p.wait.cold = c.Key(), cold
	return true, true
}

// picksAtAdmission reports whether admitPicked's rule applies to p.
func (r *Router) picksAtAdmission(p *Prepared) bool {
	return r.cfg.Router.Mode == v1.ModeKV && p.Session == "" && r.cfg.Admission.AffinityThreshold != nil
}

// roomy keeps, in place, the candidates whose active prefill is at or under
// threshold x max batched tokens and that are not busy.
func (r *Router) roomy(cands []scheduler.Candidate, threshold float64) []scheduler.Candidate {
	out := cands[:0]
	for i := range cands {
		c := &cands[i]
		if float64(c.Active.PrefillTokens) <= threshold*float64(scheduler.MaxBatched(c)) && !r.sched.Busy(c) {
			out = append(out, *c)
		}
	}
	return out
}

// admitted returns a copy of the candidate p was admitted on (nil when none)
// and forgets it, so a later decision for p is free to go elsewhere.
func admitted(p *Prepared, cands []scheduler.Candidate) *scheduler.Candidate {
	key := p.admittedOn
	p.admittedOn = ""
	if key == "" {
		return nil
	}
	for i := range cands {
		if cands[i].Key() == key {
			c := cands[i]
			return &c
		}
	}
	return nil
}

// pinAdmitted makes adm the primary of chosen, keeping the others as
// fallbacks in order (as many as before). The gate reserved p's room on adm;
// the scheduler, run again without that reservation in view, may prefer
// another endpoint, which would undo what the gate decided.
func pinAdmitted(chosen []scheduler.Candidate, adm *scheduler.Candidate) []scheduler.Candidate {
	if adm == nil || len(chosen) == 0 || chosen[0].Key() == adm.Key() {
		return chosen
	}
	out := make([]scheduler.Candidate, 1, len(chosen))
	out[0] = *adm
	for i := range chosen {
		if len(out) < len(chosen) && chosen[i].Key() != adm.Key() {
			out = append(out, chosen[i])
		}
	}
	return out
}

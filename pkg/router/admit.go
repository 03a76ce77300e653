package router

import (
	"sync"

	"github.com/kvpick/kvpick/pkg/admission"
	"github.com/kvpick/kvpick/pkg/scheduler"
)

// canDispatch is the admission predicate: some endpoint eligible for the
// request has active prefill tokens at or under threshold x max batched
// tokens and is not past a busy threshold. (Busy endpoints count as full:
// with queueing on, a fleet that is all busy holds requests in the queue,
// bounded by its length and wait, instead of answering 503 at once.)
// Following the queue's reservation contract, it reserves the request's
// prompt tokens on that endpoint until it is chosen (active work counts it
// from then), so several queued requests do not pass on the same free
// capacity.
func (r *Router) canDispatch(it *admission.Item) bool {
	p := it.Value.(*Prepared)
	eligible, err := r.sched.Eligible(&p.Req, r.Candidates(p))
	if err != nil {
		return true // let Decide report the cause
	}
	threshold := *r.cfg.Admission.QueueThreshold
	best, bestLoad := "", 0
	for i := range eligible {
		c := &eligible[i]
		load := c.Active.PrefillTokens + r.reserved.on(c.Key())
		if float64(load) <= threshold*float64(scheduler.MaxBatched(c)) && !r.sched.Busy(c) && (best == "" || load < bestLoad) {
			best, bestLoad = c.Key(), load
		}
	}
	if best == "" {
		return false
	}
	r.reserved.add(p, best, p.Req.PromptTokens)
	return true
}

// reservations are prompt tokens admitted but not yet accounted as active work.
type reservations struct {
	mu    sync.Mutex
	byEP  map[string]int
	byReq map[*Prepared]reservation
}

type reservation struct {
	endpoint string
	tokens   int
}

func newReservations() *reservations {
	return &reservations{byEP: map[string]int{}, byReq: map[*Prepared]reservation{}}
}

func (s *reservations) on(endpoint string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.byEP[endpoint]
}

func (s *reservations) add(p *Prepared, endpoint string, tokens int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.byEP[endpoint] += tokens
	s.byReq[p] = reservation{endpoint, tokens}
}

func (s *reservations) release(p *Prepared) {
	s.mu.Lock()
	defer s.mu.Unlock()
	res, ok := s.byReq[p]
	if !ok {
		return
	}
	delete(s.byReq, p)
	if s.byEP[res.endpoint] -= res.tokens; s.byEP[res.endpoint] <= 0 {
		delete(s.byEP, res.endpoint)
	}
}

// Admissible is the admission predicate for callers that run their own queue
// (the virtual-time simulator drives admission.Core itself). When it returns
// true it has reserved capacity for p; call Unreserve after Decide.
func (r *Router) Admissible(p *Prepared) bool {
	if r.cfg.Admission.QueueThreshold == nil {
		return true
	}
	return r.canDispatch(&admission.Item{Value: p})
}

// Unreserve drops p's admission reservation (its work is accounted now).
func (r *Router) Unreserve(p *Prepared) { r.reserved.release(p) }

package admission

import "sync"

// Load is one endpoint eligible for a request, as the queue-threshold gate
// sees it.
type Load struct {
	Endpoint      string
	PrefillTokens int  // active prefill tokens counted for the endpoint
	MaxBatched    int  // the engine's max_num_batched_tokens
	Busy          bool // past a busy threshold: counts as full
}

// Gate is the queue-threshold rule a Queue's canDispatch applies: a request
// may go when some eligible endpoint has active prefill tokens, plus the
// tokens reserved on it, at or under Threshold x MaxBatched and is not busy.
// Following the reservation contract of Core.Release, a request that passes
// reserves its prompt tokens on the least loaded such endpoint until Release,
// so several queued requests do not pass on the same free capacity. K
// identifies a request. Safe for concurrent use.
type Gate[K comparable] struct {
	threshold float64
	mu        sync.Mutex
	byEP      map[string]int
	byReq     map[K]reservation
}

type reservation struct {
	endpoint string
	tokens   int
}

// NewGate returns a gate with the given queue threshold (a fraction of each
// endpoint's max batched tokens).
func NewGate[K comparable](threshold float64) *Gate[K] {
	return &Gate[K]{threshold: threshold, byEP: map[string]int{}, byReq: map[K]reservation{}}
}

// Admit reports whether the request key of tokens prompt tokens may go to
// one of loads; when it may, the tokens are reserved on the chosen endpoint.
func (g *Gate[K]) Admit(key K, tokens int, loads []Load) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	best, bestLoad := "", 0
	for i := range loads {
		l := &loads[i]
		load := l.PrefillTokens + g.byEP[l.Endpoint]
		if fits(l, load, g.threshold) && (best == "" || load < bestLoad) {
			best, bestLoad = l.Endpoint, load
		}
	}
	if best == "" {
		return false
	}
	g.reserve(key, best, tokens)
	return true
}

// AdmitTo is Admit for a caller that has already picked the endpoint (the
// router's choice): the request may go when l, with the tokens reserved on
// it, is at or under threshold x MaxBatched and not busy; then its tokens
// are reserved there.
func (g *Gate[K]) AdmitTo(key K, tokens int, l Load, threshold float64) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !fits(&l, l.PrefillTokens+g.byEP[l.Endpoint], threshold) {
		return false
	}
	g.reserve(key, l.Endpoint, tokens)
	return true
}

// Room reports whether some endpoint of loads has its active prefill plus
// the tokens reserved on it at or under threshold x its max batched tokens,
// and is not busy. It reserves nothing.
func (g *Gate[K]) Room(loads []Load, threshold float64) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	for i := range loads {
		if fits(&loads[i], loads[i].PrefillTokens+g.byEP[loads[i].Endpoint], threshold) {
			return true
		}
	}
	return false
}

// Threshold is the gate's queue threshold (a fraction of max batched tokens).
func (g *Gate[K]) Threshold() float64 { return g.threshold }

func fits(l *Load, load int, threshold float64) bool {
	return float64(load) <= threshold*float64(l.MaxBatched) && !l.Busy
}

// reserve records key's tokens on endpoint; the caller holds g.mu.
func (g *Gate[K]) reserve(key K, endpoint string, tokens int) {
	g.byEP[endpoint] += tokens
	g.byReq[key] = reservation{endpoint, tokens}
}

// Reserved is the number of tokens reserved on endpoint.
func (g *Gate[K]) Reserved(endpoint string) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.byEP[endpoint]
}

// Release drops key's reservation (its work is accounted elsewhere now, or it
// will not run). A key without a reservation is ignored.
func (g *Gate[K]) Release(key K) {
	g.mu.Lock()
	defer g.mu.Unlock()
	res, ok := g.byReq[key]
	if !ok {
		return
	}
	delete(g.byReq, key)
	if g.byEP[res.endpoint] -= res.tokens; g.byEP[res.endpoint] <= 0 {
		delete(g.byEP, res.endpoint)
	}
}

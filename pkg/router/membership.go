package router

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kvpick/kvpick/pkg/endpoints"
	"github.com/kvpick/kvpick/pkg/telemetry"
)

// membership keeps the index, the active-work tracker and the per-endpoint
// gauges in step with the candidate set: capacity bounds for endpoints whose
// KV size is known, and nothing kept for endpoints that left.
type membership struct {
	mu    sync.Mutex
	known map[string]bool
}

// watchMembership registers the sync with the set and applies it once now.
func (r *Router) watchMembership() {
	m := &membership{known: map[string]bool{}}
	sync := func(s *endpoints.Snapshot) {
		m.mu.Lock()
		defer m.mu.Unlock()
		next := make(map[string]bool, len(s.List))
		for _, e := range s.List {
			next[e.Key()] = true
			if n := e.Capacity().IndexEntries(r.stride); n > 0 {
				r.deps.Index.SetCapacity(e.Key(), n)
			}
		}
		for key := range m.known {
			if !next[key] {
				r.deps.Index.RemoveEndpoint(key)
				r.deps.Active.Forget(key)
				r.rates.learner.Forget(key)
				telemetry.CompatForgetWorker(key)
				for _, g := range []*prometheus.GaugeVec{telemetry.ActivePrefillTokens, telemetry.ActiveDecodeBlocks, telemetry.ActiveRequests} {
					g.DeleteLabelValues(key)
				}
			}
		}
		m.known = next
	}
	r.deps.Set.OnChange(sync)
	sync(r.deps.Set.Snapshot())
}

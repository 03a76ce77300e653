package router

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	v1 "github.com/kvpick/kvpick/api/v1alpha1"
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
			if !m.known[e.Key()] {
				r.trackPath(e.Key())
			}
			if n := e.Capacity().IndexEntries(r.stride); n > 0 {
				r.deps.Index.SetCapacity(e.Key(), n)
			}
		}
		for key := range m.known {
			if !next[key] {
				r.deps.Index.RemoveEndpoint(key)
				r.deps.Active.Forget(key)
				r.rates.learner.Forget(key)
				r.forgetPath(key)
				telemetry.CompatForgetWorker(key)
				for _, g := range []*prometheus.GaugeVec{telemetry.ActivePrefillTokens, telemetry.ActiveDecodeBlocks, telemetry.ActiveRequests, telemetry.PrefillPressure} {
					g.DeleteLabelValues(key)
				}
			}
		}
		m.known = next
	}
	r.deps.Set.OnChange(sync)
	sync(r.deps.Set.Snapshot())
}

// trackPath publishes a new endpoint's observation path gauge.
func (r *Router) trackPath(key string) {
	if r.deps.Events != nil {
		r.deps.Events.Track(key)
		return
	}
	telemetry.SetEndpointPath(r.deps.Pool, key, r.cfg.KV.Observation == v1.ObserveEvents)
}

// forgetPath drops what the feed and the gauges hold for a departed endpoint.
func (r *Router) forgetPath(key string) {
	if r.deps.Events != nil {
		r.deps.Events.Forget(key)
		return
	}
	telemetry.ForgetEndpointPath(r.deps.Pool, key)
}

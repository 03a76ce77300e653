package endpoints

import "github.com/kvpick/kvpick/pkg/telemetry"

// PodLoads lists the current snapshot's endpoints for the pool-level gauges
// (telemetry.RegisterPool): pod name (the endpoint's name, else its address),
// whether it is a candidate, and its last scraped queue, batch and KV usage.
// Safe for concurrent use.
func (s *Set) PodLoads() []telemetry.PodLoad {
	snap := s.Snapshot()
	out := make([]telemetry.PodLoad, 0, len(snap.List))
	for _, e := range snap.List {
		l := e.Load()
		pod := e.Name
		if pod == "" {
			pod = e.Key()
		}
		out = append(out, telemetry.PodLoad{Pod: pod, Ready: !l.Excluded, Waiting: l.Waiting, Running: l.Running, KVUsage: l.KVUsage})
	}
	return out
}

package scrape

import (
	"net"
	"strconv"

	"github.com/kvpick/kvpick/pkg/endpoints"
	"github.com/kvpick/kvpick/pkg/kvindex"
)

// StateSink is the Sink that writes scrape results to the state the decision
// reads: each endpoint's load in the set and, for an endpoint whose own
// capacity does not give its KV size, the index's capacity bound from the
// scraped total. Notify (may be nil) runs after every update: capacity may
// have freed for the admission queue. Safe for concurrent use.
type StateSink struct {
	Set    *endpoints.Set
	Index  *kvindex.Index
	Stride int // the index stride (v1alpha1 KV.IndexStride)
	Notify func()
}

// UpdateScrape implements Sink.
func (s *StateSink) UpdateScrape(key string, st Status) {
	l := LoadOf(st)
	if s.Set.UpdateLoad(key, l) && l.TotalBlocks > 0 {
		if e, ok := s.Set.Snapshot().Get(key); ok && e.Endpoint.Capacity.TotalBlocks == 0 {
			s.Index.SetCapacity(key, e.Capacity().IndexEntries(s.Stride))
		}
	}
	if s.Notify != nil {
		s.Notify()
	}
}

// LoadOf maps a scrape status to the endpoint load the scheduler reads: the
// sample's signals when there is one, trusted (Fresh) while it is not stale,
// and the exclusion with its reason.
func LoadOf(st Status) endpoints.Load {
	l := endpoints.Load{Excluded: st.Excluded, Reason: st.LastError, Fresh: st.HasSample && !st.Stale}
	if st.HasSample {
		sm := st.Sample
		l.Waiting, l.Running, l.KVUsage = sm.Waiting, sm.Running, sm.KVUsage
		l.BlockSize, l.TotalBlocks, l.At = sm.BlockSize, sm.TotalBlocks, sm.ScrapedAt
		l.RunningLoRA, l.MaxLoRA = sm.RunningLoRA, sm.MaxLoRA
	}
	return l
}

// Targets are the scrape targets of a candidate set: each endpoint's metrics
// port and path (its own metricsPath, else pathFor its engine type, as
// trtllm-serve keeps Prometheus text off /metrics), with its engine type.
func Targets(s *endpoints.Snapshot, pathFor func(engine string) string) []Target {
	ts := make([]Target, 0, len(s.List))
	for _, e := range s.List {
		path := e.MetricsPath
		if path == "" {
			path = pathFor(e.Engine)
		}
		url := "http://" + net.JoinHostPort(e.Address, strconv.Itoa(e.MetricsPort)) + path
		ts = append(ts, Target{Key: e.Key(), URL: url, Engine: Engine(e.Engine)})
	}
	return ts
}

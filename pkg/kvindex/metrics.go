package kvindex

import (
	"sort"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kvpick/kvpick/pkg/telemetry"
)

// KV index metrics (pkg/kvindex). The index keeps its own counters (it also
// runs inside simulators, many instances per process), so these are read from
// Index.Stats at scrape time for the instances registered with
// RegisterMetrics. Label index names the instance (e.g. "observed",
// "predicted"), path says which observation path created the entries.
var kvIndexes = &kvIndexCollector{sources: map[string]func() Stats{}}

// init registers the collector once every descriptor above is built.
func init() { telemetry.Register(kvIndexes) }

// RegisterMetrics exports an index's Stats under the given instance name,
// replacing an earlier source of that name. Safe for concurrent use.
func RegisterMetrics(name string, stats func() Stats) {
	kvIndexes.mu.Lock()
	kvIndexes.sources[name] = stats
	kvIndexes.mu.Unlock()
}

// UnregisterMetrics stops exporting an instance.
func UnregisterMetrics(name string) {
	kvIndexes.mu.Lock()
	delete(kvIndexes.sources, name)
	kvIndexes.mu.Unlock()
}

var (
	kvIndexEntriesDesc = prometheus.NewDesc(prometheus.BuildFQName(telemetry.Namespace, "kvindex", "entries"),
		"(block, endpoint) entries held by the KV index, by the path that created them (observed from engine events, predicted from own decisions).",
		[]string{"index", "path"}, nil)
	kvIndexBlocksDesc = prometheus.NewDesc(prometheus.BuildFQName(telemetry.Namespace, "kvindex", "blocks"),
		"Distinct prompt blocks held by at least one endpoint.", []string{"index"}, nil)
	kvIndexEndpointDesc = prometheus.NewDesc(prometheus.BuildFQName(telemetry.Namespace, "kvindex", "endpoint_blocks"),
		"Blocks the KV index attributes to an endpoint.", []string{"index", "endpoint"}, nil)
	kvIndexCapacityDesc = prometheus.NewDesc(prometheus.BuildFQName(telemetry.Namespace, "kvindex", "endpoint_capacity_blocks"),
		"Per-endpoint bound on index entries (engine KV blocks when known, else the default).", []string{"index", "endpoint"}, nil)
	kvIndexEvictionsDesc = prometheus.NewDesc(prometheus.BuildFQName(telemetry.Namespace, "kvindex", "evictions_total"),
		"Entries dropped by LRU pruning when an endpoint exceeded its capacity.", []string{"index"}, nil)
	kvIndexExpiredDesc = prometheus.NewDesc(prometheus.BuildFQName(telemetry.Namespace, "kvindex", "expired_total"),
		"Predicted entries dropped after their TTL.", []string{"index"}, nil)
	kvIndexUnknownParentDesc = prometheus.NewDesc(prometheus.BuildFQName(telemetry.Namespace, "kvindex", "unknown_parent_total"),
		"BlockStored events that could not be placed because their parent block was unknown.", []string{"index"}, nil)
	kvIndexRetractedDesc = prometheus.NewDesc(prometheus.BuildFQName(telemetry.Namespace, "kvindex", "retracted_total"),
		"Predicted entries taken back because the engine refused the request that claimed them (it cached none of its prompt).", []string{"index"}, nil)
)

type kvIndexCollector struct {
	mu      sync.Mutex
	sources map[string]func() Stats
}

func (c *kvIndexCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{kvIndexEntriesDesc, kvIndexBlocksDesc, kvIndexEndpointDesc,
		kvIndexCapacityDesc, kvIndexEvictionsDesc, kvIndexExpiredDesc, kvIndexUnknownParentDesc, kvIndexRetractedDesc} {
		ch <- d
	}
}

func (c *kvIndexCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	names := make([]string, 0, len(c.sources))
	for n := range c.sources {
		names = append(names, n)
	}
	srcs := make([]func() Stats, len(names))
	sort.Strings(names)
	for i, n := range names {
		srcs[i] = c.sources[n]
	}
	c.mu.Unlock()
	for i, n := range names {
		collectKVIndex(ch, n, srcs[i]())
	}
}

func collectKVIndex(ch chan<- prometheus.Metric, name string, st Stats) {
	gauge, counter := prometheus.GaugeValue, prometheus.CounterValue
	ch <- prometheus.MustNewConstMetric(kvIndexEntriesDesc, gauge, float64(st.Observed), name, "observed")
	ch <- prometheus.MustNewConstMetric(kvIndexEntriesDesc, gauge, float64(st.Predicted), name, "predicted")
	ch <- prometheus.MustNewConstMetric(kvIndexBlocksDesc, gauge, float64(st.UniqueBlocks), name)
	for _, e := range st.Endpoints {
		ch <- prometheus.MustNewConstMetric(kvIndexEndpointDesc, gauge, float64(e.Blocks), name, e.Endpoint)
		ch <- prometheus.MustNewConstMetric(kvIndexCapacityDesc, gauge, float64(e.Capacity), name, e.Endpoint)
	}
	ch <- prometheus.MustNewConstMetric(kvIndexEvictionsDesc, counter, float64(st.Evictions), name)
	ch <- prometheus.MustNewConstMetric(kvIndexExpiredDesc, counter, float64(st.Expired), name)
	ch <- prometheus.MustNewConstMetric(kvIndexUnknownParentDesc, counter, float64(st.UnknownParent), name)
	ch <- prometheus.MustNewConstMetric(kvIndexRetractedDesc, counter, float64(st.Retracted), name)
}

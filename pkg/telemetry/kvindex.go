package telemetry

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/kvpick/kvpick/pkg/kvindex"
)

// KV index metrics (pkg/kvindex). The index keeps its own counters (it also
// runs inside simulators, many instances per process), so these are read from
// Index.Stats at scrape time for the instances registered with
// RegisterKVIndex. Label index names the instance (e.g. "observed",
// "predicted"), path says which observation path created the entries.
var kvIndexes = must(&kvIndexCollector{})

// RegisterKVIndex exports an index's Stats under the given instance name,
// replacing an earlier source of that name. Safe for concurrent use.
func RegisterKVIndex(name string, stats func() kvindex.Stats) { kvIndexes.src.set(name, stats) }

// UnregisterKVIndex stops exporting an instance.
func UnregisterKVIndex(name string) { kvIndexes.src.remove(name) }

var (
	kvIndexEntriesDesc = prometheus.NewDesc(prometheus.BuildFQName(Namespace, "kvindex", "entries"),
		"(block, endpoint) entries held by the KV index, by the path that created them (observed from engine events, predicted from own decisions).",
		[]string{"index", "path"}, nil)
	kvIndexBlocksDesc = prometheus.NewDesc(prometheus.BuildFQName(Namespace, "kvindex", "blocks"),
		"Distinct prompt blocks held by at least one endpoint.", []string{"index"}, nil)
	kvIndexEndpointDesc = prometheus.NewDesc(prometheus.BuildFQName(Namespace, "kvindex", "endpoint_blocks"),
		"Blocks the KV index attributes to an endpoint.", []string{"index", "endpoint"}, nil)
	kvIndexCapacityDesc = prometheus.NewDesc(prometheus.BuildFQName(Namespace, "kvindex", "endpoint_capacity_blocks"),
		"Per-endpoint bound on index entries (engine KV blocks when known, else the default).", []string{"index", "endpoint"}, nil)
	kvIndexEvictionsDesc = prometheus.NewDesc(prometheus.BuildFQName(Namespace, "kvindex", "evictions_total"),
		"Entries dropped by LRU pruning when an endpoint exceeded its capacity.", []string{"index"}, nil)
	kvIndexExpiredDesc = prometheus.NewDesc(prometheus.BuildFQName(Namespace, "kvindex", "expired_total"),
		"Predicted entries dropped after their TTL.", []string{"index"}, nil)
	kvIndexUnknownParentDesc = prometheus.NewDesc(prometheus.BuildFQName(Namespace, "kvindex", "unknown_parent_total"),
		"BlockStored events that could not be placed because their parent block was unknown.", []string{"index"}, nil)
)

type kvIndexCollector struct{ src sources[kvindex.Stats] }

func (c *kvIndexCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{kvIndexEntriesDesc, kvIndexBlocksDesc, kvIndexEndpointDesc,
		kvIndexCapacityDesc, kvIndexEvictionsDesc, kvIndexExpiredDesc, kvIndexUnknownParentDesc} {
		ch <- d
	}
}

func (c *kvIndexCollector) Collect(ch chan<- prometheus.Metric) {
	c.src.each(func(name string, st kvindex.Stats) { collectKVIndex(ch, name, st) })
}

func collectKVIndex(ch chan<- prometheus.Metric, name string, st kvindex.Stats) {
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
}

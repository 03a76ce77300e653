package telemetry

import "github.com/prometheus/client_golang/prometheus"

// PodLoad is one endpoint of a pool as the pool gauges see it: its pod name
// and its latest scraped load.
type PodLoad struct {
	Pod     string
	Ready   bool // a candidate: not excluded by failed scrapes
	Waiting int
	Running int
	KVUsage float64 // 0-1
}

// Pool-level gauges of the reference picker (inference_pool_*), computed at
// scrape time from the endpoints set of every pool registered with
// RegisterPool, so they never go stale between updates.
var pools = must(&poolCollector{})

// RegisterPool exports the inference_pool_* gauges of pool name from loads,
// replacing an earlier source of that name. loads must be safe to call from
// the metrics handler. Safe for concurrent use.
func RegisterPool(name string, loads func() []PodLoad) { pools.src.set(name, loads) }

// UnregisterPool stops exporting a pool.
func UnregisterPool(name string) { pools.src.remove(name) }

var (
	poolReadyDesc = prometheus.NewDesc("inference_pool_ready_pods",
		"The number of ready pods in the inference server pool (endpoints not excluded by failed scrapes).", []string{"name"}, nil)
	poolAvgQueueDesc = prometheus.NewDesc("inference_pool_average_queue_size",
		"The average number of requests pending in the model server queue, over ready pods.", []string{"name"}, nil)
	poolAvgKVDesc = prometheus.NewDesc("inference_pool_average_kv_cache_utilization",
		"The average kv cache utilization (0-1) of the ready pods of the pool.", []string{"name"}, nil)
	poolAvgRunningDesc = prometheus.NewDesc("inference_pool_average_running_requests",
		"The average number of running requests across the ready pods of the pool.", []string{"name"}, nil)
	poolPerPodQueueDesc = prometheus.NewDesc("inference_pool_per_pod_queue_size",
		"The total number of requests pending in the model server queue for each underlying pod.",
		[]string{"name", "model_server_pod"}, nil)
)

type poolCollector struct{ src sources[[]PodLoad] }

func (c *poolCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{poolReadyDesc, poolAvgQueueDesc, poolAvgKVDesc, poolAvgRunningDesc, poolPerPodQueueDesc} {
		ch <- d
	}
}

func (c *poolCollector) Collect(ch chan<- prometheus.Metric) {
	c.src.each(func(name string, pods []PodLoad) { collectPool(ch, name, pods) })
}

// collectPool emits one pool's gauges; the averages only when a pod is ready
// (an average over nothing would read as an idle pool). Endpoints of one pod
// (several target ports) add up in the per-pod queue, as one series per pod.
func collectPool(ch chan<- prometheus.Metric, name string, pods []PodLoad) {
	var ready, waiting, running int
	var kv float64
	perPod := make(map[string]int, len(pods))
	for _, p := range pods {
		perPod[p.Pod] += p.Waiting
		if !p.Ready {
			continue
		}
		ready++
		waiting += p.Waiting
		running += p.Running
		kv += p.KVUsage
	}
	for pod, w := range perPod {
		ch <- prometheus.MustNewConstMetric(poolPerPodQueueDesc, prometheus.GaugeValue, float64(w), name, pod)
	}
	ch <- prometheus.MustNewConstMetric(poolReadyDesc, prometheus.GaugeValue, float64(ready), name)
	if ready == 0 {
		return
	}
	n := float64(ready)
	ch <- prometheus.MustNewConstMetric(poolAvgQueueDesc, prometheus.GaugeValue, float64(waiting)/n, name)
	ch <- prometheus.MustNewConstMetric(poolAvgKVDesc, prometheus.GaugeValue, kv/n, name)
	ch <- prometheus.MustNewConstMetric(poolAvgRunningDesc, prometheus.GaugeValue, float64(running)/n, name)
}

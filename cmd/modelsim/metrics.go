package main

import (
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// metricNames spells the engine metrics in one server's dialect.
type metricNames struct {
	running, waiting, kvUsage, cacheConfig string
	blockSizeLabel, numBlocksLabel         string
	blockSizeGauge, numBlocksGauge         string // capacity as plain gauges (SGLang v0.5.12+, trtllm-serve)
	lora, queries, hits, ttft, preemptions string
	hitRate                                string
}

var (
	vllmNames = metricNames{
		running: "vllm:num_requests_running", waiting: "vllm:num_requests_waiting",
		kvUsage: "vllm:kv_cache_usage_perc", cacheConfig: "vllm:cache_config_info",
		blockSizeLabel: "block_size", numBlocksLabel: "num_gpu_blocks",
		lora: "vllm:lora_requests_info", queries: "vllm:prefix_cache_queries_total",
		hits: "vllm:prefix_cache_hits_total", ttft: "vllm:time_to_first_token_seconds",
		preemptions: "vllm:num_preemptions_total",
	}
	sglangNames = metricNames{
		running: "sglang:num_running_reqs", waiting: "sglang:num_queue_reqs",
		kvUsage: "sglang:token_usage", cacheConfig: "sglang:cache_config_info",
		blockSizeLabel: "page_size", numBlocksLabel: "num_pages",
		ttft: "sglang:time_to_first_token_seconds", hitRate: "sglang:cache_hit_rate",
	}
	// sglangGaugeNames: SGLang v0.5.12+ dropped cache_config_info for plain gauges.
	sglangGaugeNames = metricNames{
		running: "sglang:num_running_reqs", waiting: "sglang:num_queue_reqs", kvUsage: "sglang:token_usage",
		blockSizeGauge: "sglang:page_size", numBlocksGauge: "sglang:num_pages",
		ttft: "sglang:time_to_first_token_seconds", hitRate: "sglang:cache_hit_rate",
	}
	trtllmNames = metricNames{
		running: "trtllm_num_requests_running", waiting: "trtllm_num_requests_waiting",
		kvUsage: "trtllm_kv_cache_utilization", blockSizeGauge: "trtllm_kv_cache_tokens_per_block",
		numBlocksGauge: "trtllm_kv_cache_max_blocks", ttft: "trtllm_time_to_first_token_seconds",
	}
	// metricsStyles are the --metrics-style values and their vocabularies.
	metricsStyles = []string{"vllm", "sglang", "sglang-gauges", "trtllm"}
	styleNames    = map[string]metricNames{"vllm": vllmNames, "sglang": sglangNames, "sglang-gauges": sglangGaugeNames, "trtllm": trtllmNames}
)

// metricsPath is where a style serves Prometheus text: trtllm-serve uses
// /prometheus/metrics (its /metrics is JSON iteration stats).
func metricsPath(style string) string {
	if style == "trtllm" {
		return "/prometheus/metrics"
	}
	return "/metrics"
}

// ttftBuckets are vLLM's time_to_first_token_seconds buckets.
var ttftBuckets = []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0,
	2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0}

// engineCollector exports the engine's state, read at scrape time, under the
// chosen dialect's names. It owns its own registry (not kvpick's).
type engineCollector struct {
	names  metricNames
	stats  func() engineStatsView
	labels prometheus.Labels
	descs  map[string]*prometheus.Desc
}

// engineStatsView is what the collector needs from the runner.
type engineStatsView struct {
	running, waiting               int
	kvUsage                        float64
	queries, hits, preemptions     int64
	runningLoRAs, waitingLoRAs     []string
	blockSize, numBlocks, maxLoRAs int
	clock                          stepClock
}

// Simulator-only counters, the same in every style: no engine exports them,
// so kvpick never reads them; they are for judging a run (see stepClock).
const (
	simStepsName    = "modelsim_steps_total"
	simModelledName = "modelsim_step_modelled_seconds_total"
	simLostName     = "modelsim_host_lost_seconds_total"
	simPrefillName  = "modelsim_prefill_tokens_total"
)

func newMetrics(style, model string, stats func() engineStatsView) (*prometheus.Registry, prometheus.Observer) {
	names := styleNames[style]
	labels := prometheus.Labels{"model_name": model, "engine": "0"}
	if style != "vllm" {
		labels = prometheus.Labels{"model_name": model}
	}
	c := &engineCollector{names: names, stats: stats, labels: labels, descs: map[string]*prometheus.Desc{}}
	c.define()
	reg := prometheus.NewRegistry()
	ttft := prometheus.NewHistogram(prometheus.HistogramOpts{Name: names.ttft,
		Help: "Histogram of time to first token in seconds.", Buckets: ttftBuckets, ConstLabels: labels})
	reg.MustRegister(c, ttft)
	return reg, ttft
}

func (c *engineCollector) def(name, help string, variable ...string) {
	if name != "" {
		c.descs[name] = prometheus.NewDesc(name, help, variable, c.labels)
	}
}

func (c *engineCollector) define() {
	n := c.names
	c.def(n.running, "Number of requests in model execution batches.")
	c.def(n.waiting, "Number of requests waiting to be processed.")
	c.def(n.kvUsage, "KV-cache usage. 1 means 100 percent usage.")
	c.def(n.cacheConfig, "Information of the LLMEngine CacheConfig.", n.blockSizeLabel, n.numBlocksLabel,
		"enable_prefix_caching")
	c.def(n.lora, "Running stats on lora requests.", "max_lora", "running_lora_adapters", "waiting_lora_adapters")
	c.def(n.queries, "Prefix cache queries, in terms of number of queried tokens.")
	c.def(n.hits, "Prefix cache hits, in terms of number of cached tokens.")
	c.def(n.preemptions, "Cumulative number of preemptions from the engine.")
	c.def(n.hitRate, "The prefix cache hit rate.")
	c.def(n.blockSizeGauge, "KV cache page size in tokens.")
	c.def(n.numBlocksGauge, "Number of KV cache pages.")
	c.def(simStepsName, "Engine steps run.")
	c.def(simModelledName, "Modelled duration of the steps run; busy time as the engine model charges it.")
	c.def(simLostName, "Engine time lost to the host: a busy engine's step started this much later than the previous step's results were due, beyond the catch-up bound.")
	c.def(simPrefillName, "Prompt tokens computed (prefix-cache hits excluded, recomputation after preemption included).")
}

// Describe implements prometheus.Collector.
func (c *engineCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range c.descs {
		ch <- d
	}
}

// Collect implements prometheus.Collector; it snapshots the engine once.
func (c *engineCollector) Collect(ch chan<- prometheus.Metric) {
	s, n := c.stats(), c.names
	emit := func(name string, t prometheus.ValueType, v float64, lv ...string) {
		if d := c.descs[name]; d != nil {
			ch <- prometheus.MustNewConstMetric(d, t, v, lv...)
		}
	}
	emit(n.running, prometheus.GaugeValue, float64(s.running))
	emit(n.waiting, prometheus.GaugeValue, float64(s.waiting))
	emit(n.kvUsage, prometheus.GaugeValue, s.kvUsage)
	emit(n.cacheConfig, prometheus.GaugeValue, 1, strconv.Itoa(s.blockSize), strconv.Itoa(s.numBlocks), "True")
	emit(n.lora, prometheus.GaugeValue, float64(time.Now().UnixNano())/1e9,
		strconv.Itoa(s.maxLoRAs), joinSorted(s.runningLoRAs), joinSorted(s.waitingLoRAs))
	emit(n.queries, prometheus.CounterValue, float64(s.queries))
	emit(n.hits, prometheus.CounterValue, float64(s.hits))
	emit(n.preemptions, prometheus.CounterValue, float64(s.preemptions))
	emit(n.blockSizeGauge, prometheus.GaugeValue, float64(s.blockSize))
	emit(n.numBlocksGauge, prometheus.GaugeValue, float64(s.numBlocks))
	emit(simStepsName, prometheus.CounterValue, float64(s.clock.steps))
	emit(simModelledName, prometheus.CounterValue, s.clock.modelled.Seconds())
	emit(simLostName, prometheus.CounterValue, s.clock.lost.Seconds())
	emit(simPrefillName, prometheus.CounterValue, float64(s.clock.prefillTokens))
	if s.queries > 0 {
		emit(n.hitRate, prometheus.GaugeValue, float64(s.hits)/float64(s.queries))
	} else {
		emit(n.hitRate, prometheus.GaugeValue, 0)
	}
}

func joinSorted(names []string) string {
	out := append([]string(nil), names...)
	sort.Strings(out)
	return strings.Join(out, ",")
}

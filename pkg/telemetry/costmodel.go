package telemetry

import "github.com/prometheus/client_golang/prometheus"

// Metrics of the time cost model's online rates (pkg/costmodel).
var (
	// CostPrefillRate is, per endpoint, the learned prefill throughput.
	CostPrefillRate = must(prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: Namespace, Name: "costmodel_prefill_tokens_per_second",
		Help: "Prefill throughput the kv time cost model has learned for the endpoint.",
	}, []string{"endpoint"}))
	// CostDecodeStep is, per endpoint, the learned scale of predicted decode step time (1 = the configured rates).
	CostDecodeStep = must(prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: Namespace, Name: "costmodel_decode_step_scale",
		Help: "Observed inter-token time / the configured rates' step time, as learned for the endpoint.",
	}, []string{"endpoint"}))
	// CostTTFTError is observed minus predicted time to first token.
	CostTTFTError = must(prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: Namespace, Name: "costmodel_ttft_error_seconds",
		Help:    "Observed minus predicted time to first token of routed requests (negative: faster than predicted).",
		Buckets: []float64{-10, -3, -1, -0.3, -0.1, -0.03, 0, 0.03, 0.1, 0.3, 1, 3, 10},
	}, []string{"pool"}))
)

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
	// CostPrefillObservations counts, per endpoint, first-token observations
	// by what the prefill rate made of them.
	CostPrefillObservations = must(prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Name: "costmodel_prefill_observations_total",
		Help: "Timed first tokens with the engine's usage report, by outcome: learned (the prefill rate moved), queued (prefill was queued ahead at dispatch), joined (prefill was dispatched there before the first token, sharing its steps) or cached (nothing to compute); only learned ones teach the rate.",
	}, []string{"endpoint", "outcome"}))
	// CostTTFTError is observed minus predicted time to first token.
	CostTTFTError = must(prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: Namespace, Name: "costmodel_ttft_error_seconds",
		Help:    "Observed minus predicted time to first token of routed requests (negative: faster than predicted).",
		Buckets: []float64{-10, -3, -1, -0.3, -0.1, -0.03, 0, 0.03, 0.1, 0.3, 1, 3, 10},
	}, []string{"pool"}))
)

package telemetry

import "github.com/prometheus/client_golang/prometheus"

// Metrics of the ext_proc server (pkg/extproc). All are safe for concurrent use.
var (
	// ExtprocRequests counts finished ext_proc streams. model is the request's model once its body parsed (routed
	// or rejected after parsing; at most 256 values, then "other"), else empty; outcome is one of routed, rejected,
	// upstream_error, canceled.
	ExtprocRequests = must(prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Name: "requests_total",
		Help: "Requests seen by the endpoint picker, by model, router mode, outcome and HTTP status.",
	}, []string{"model", "mode", "outcome", "status"}))

	// ExtprocDecisionDuration is the time from the end of the request body (or headers) to the routing decision,
	// admission queueing included.
	ExtprocDecisionDuration = must(prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: Namespace, Name: "decision_duration_seconds",
		Help:    "Time from the end of the request body to the routing decision (parse, admission, scheduling).",
		Buckets: prometheus.ExponentialBuckets(10e-6, 2, 20), // 10µs .. ~5.2s
	}, []string{"mode"}))

	// ExtprocTTFT is the time from the request headers to the first generated output seen in the response.
	ExtprocTTFT = must(prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: Namespace, Name: "time_to_first_token_seconds",
		Help:    "Time from the request reaching the picker to the first output token observed in the response.",
		Buckets: prometheus.ExponentialBuckets(0.005, 2, 14), // 5ms .. ~41s
	}, []string{"model"}))

	// ExtprocRequestDuration is the time from the request headers to the end of the response.
	ExtprocRequestDuration = must(prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: Namespace, Name: "request_duration_seconds",
		Help:    "Time from the request reaching the picker to the end of its response.",
		Buckets: prometheus.ExponentialBuckets(0.01, 2, 15), // 10ms .. ~164s
	}, []string{"model"}))

	// ExtprocEndpointInflight is the number of routed requests per endpoint whose response has not ended.
	ExtprocEndpointInflight = must(prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: Namespace, Name: "endpoint_inflight_requests",
		Help: "Requests this picker routed to an endpoint whose response has not ended yet.",
	}, []string{"endpoint"}))

	// ExtprocEndpointUnfinished counts routed requests whose response did not complete, by endpoint and outcome
	// (canceled: the stream ended before the response did, as when the endpoint dies mid-response; upstream_error:
	// status >= 500). A gateway may retry these; the series are kept when the endpoint leaves, to count what it took.
	ExtprocEndpointUnfinished = must(prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Name: "endpoint_unfinished_requests_total",
		Help: "Requests routed to an endpoint whose response did not complete (canceled or upstream_error).",
	}, []string{"endpoint", "outcome"}))

	// ExtprocActiveStreams is the number of open ext_proc streams.
	ExtprocActiveStreams = must(prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace: Namespace, Name: "active_streams",
		Help: "Open ext_proc streams (one per HTTP request passing through the gateway).",
	}))
)

package telemetry

import "github.com/prometheus/client_golang/prometheus"

// Admission queue metrics (pkg/admission). Label pool names the InferencePool
// (or static pool) the queue belongs to; several queues may share a pool, so
// the gauges are moved by deltas, never Set.
var (
	// QueuePendingRequests is the number of requests waiting in the queue.
	QueuePendingRequests = must(prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: Namespace, Subsystem: "router", Name: "queue_pending_requests",
		Help: "Requests waiting in the admission queue because every eligible endpoint is above the queue threshold.",
	}, []string{"pool"}))

	// QueuePendingISLTokens is the sum of the prompt tokens of the queued
	// requests: a rising value with a modest request count is a long-prompt surge.
	QueuePendingISLTokens = must(prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: Namespace, Subsystem: "router", Name: "queue_pending_isl_tokens",
		Help: "Prompt (input sequence) tokens of the requests waiting in the admission queue.",
	}, []string{"pool"}))

	// QueueWaitSeconds is the time a request spent in the queue, by how it left.
	QueueWaitSeconds = must(prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: Namespace, Subsystem: "router", Name: "queue_wait_seconds",
		Help:    "Time requests spent in the admission queue, by outcome (dispatched, queue_timeout, request_shed, canceled, shutdown).",
		Buckets: []float64{.001, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60},
	}, []string{"pool", "outcome"}))

	// QueuePassSeconds is how long one release pass took. A pass asks about
	// every waiting request, so it grows with the queue, and the queue waits
	// as long as a pass over paceAbove took before the next: a replica whose
	// passes grow releases less often, which is how a queue that stands on
	// one replica while its peers' are empty shows here.
	QueuePassSeconds = must(prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: Namespace, Subsystem: "router", Name: "queue_pass_seconds",
		Help:    "Time one admission release pass took (it asks about every waiting request; after a pass over 200us the queue waits as long before the next).",
		Buckets: []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25},
	}, []string{"pool"}))

	// QueueDispatchedTotal counts requests that entered the queue and were
	// later dispatched (requests admitted on the fast path are not counted).
	QueueDispatchedTotal = must(prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Subsystem: "router", Name: "queue_dispatched_total",
		Help: "Requests dispatched after waiting in the admission queue.",
	}, []string{"pool"}))

	// QueueRejectionsTotal counts requests the queue turned away, by reason
	// (queue_full, queue_timeout, request_shed, canceled, shutdown).
	QueueRejectionsTotal = must(prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Subsystem: "router", Name: "queue_rejections_total",
		Help: "Requests not dispatched by the admission queue, by reason.",
	}, []string{"pool", "reason"}))
)

package telemetry

import "github.com/prometheus/client_golang/prometheus"

// KV-cache event subscription metrics (pkg/kvevents), labelled by the picker
// endpoint the events describe. All are safe for concurrent use.
var (
	// KVEventsBatches counts batches delivered to the index, live or replayed.
	KVEventsBatches = must(prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Subsystem: "kvevents", Name: "batches_total",
		Help: "KV event batches received from model servers and delivered to the index.",
	}, []string{"endpoint"}))
	// KVEventsEvents counts delivered events by type (BlockStored, BlockRemoved,
	// AllBlocksCleared, unknown, invalid: a known event with a malformed field,
	// dropped while the rest of its batch is applied).
	KVEventsEvents = must(prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Subsystem: "kvevents", Name: "events_total",
		Help: "KV events received, by event type; unknown types and invalid events are skipped.",
	}, []string{"endpoint", "type"}))
	// KVEventsRestarts counts publisher restarts detected (sequence reset, or
	// another batch under a sequence already seen); each clears the endpoint's
	// observed blocks.
	KVEventsRestarts = must(prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Subsystem: "kvevents", Name: "publisher_restarts_total",
		Help: "KV event publisher restarts detected; each clears the endpoint's observed blocks.",
	}, []string{"endpoint"}))

	// KVEventsGaps counts sequence gaps seen on the live stream.
	KVEventsGaps = must(prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Subsystem: "kvevents", Name: "sequence_gaps_total",
		Help: "Sequence gaps detected on the KV event stream (missed batches).",
	}, []string{"endpoint"}))
	// KVEventsMissed counts batches lost for good (replay unavailable or too short).
	KVEventsMissed = must(prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Subsystem: "kvevents", Name: "missed_batches_total",
		Help: "KV event batches lost: neither received nor recovered by replay.",
	}, []string{"endpoint"}))
	// KVEventsReplayed counts batches recovered through the replay endpoint.
	KVEventsReplayed = must(prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Subsystem: "kvevents", Name: "replayed_batches_total",
		Help: "KV event batches recovered through the replay endpoint after a gap.",
	}, []string{"endpoint"}))
	// KVEventsDecodeErrors counts messages that could not be decoded.
	KVEventsDecodeErrors = must(prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Subsystem: "kvevents", Name: "decode_errors_total",
		Help: "KV event messages dropped because their frames or payload were malformed.",
	}, []string{"endpoint"}))
	// KVEventsConnected is 1 while the subscriber holds a connection.
	KVEventsConnected = must(prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: Namespace, Subsystem: "kvevents", Name: "connected",
		Help: "1 while the KV event subscriber is connected to the endpoint's publisher.",
	}, []string{"endpoint"}))
)

// ForgetKVEventsEndpoint drops every kvevents series of an endpoint that has
// left the pool, so label sets do not accumulate.
func ForgetKVEventsEndpoint(endpoint string) {
	l := prometheus.Labels{"endpoint": endpoint}
	KVEventsBatches.DeletePartialMatch(l)
	KVEventsEvents.DeletePartialMatch(l)
	KVEventsGaps.DeletePartialMatch(l)
	KVEventsRestarts.DeletePartialMatch(l)
	KVEventsMissed.DeletePartialMatch(l)
	KVEventsReplayed.DeletePartialMatch(l)
	KVEventsDecodeErrors.DeletePartialMatch(l)
	KVEventsConnected.DeletePartialMatch(l)
}

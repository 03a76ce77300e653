package telemetry

import "github.com/prometheus/client_golang/prometheus"

// Metrics of the decision path (pkg/router). All are safe for concurrent use.
var (
	// ActivePrefillTokens is, per endpoint, the uncached prompt tokens this picker sent that have no first token yet.
	ActivePrefillTokens = must(prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: Namespace, Name: "endpoint_active_prefill_tokens",
		Help: "Uncached prompt tokens routed to the endpoint whose first token has not been seen.",
	}, []string{"endpoint"}))
	// ActiveDecodeBlocks is, per endpoint, the KV blocks held by requests this picker has in flight there.
	ActiveDecodeBlocks = must(prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: Namespace, Name: "endpoint_active_decode_blocks",
		Help: "KV blocks (prompt and output) held by requests in flight on the endpoint.",
	}, []string{"endpoint"}))
	// ActiveRequests is, per endpoint, the requests this picker has in flight there.
	ActiveRequests = must(prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: Namespace, Name: "endpoint_active_requests",
		Help: "Requests routed to the endpoint and not yet finished, as accounted by this picker.",
	}, []string{"endpoint"}))
	// PrefillPressure is, per endpoint, the uncached prompt tokens per second
	// recently dispatched there (router.kvCost.prefillPressureWindow).
	PrefillPressure = must(prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: Namespace, Name: "endpoint_prefill_pressure_tokens_per_second",
		Help: "Uncached prompt tokens per second dispatched to the endpoint (this picker's and its synced peers'), averaged over router.kvCost.prefillPressureWindow; the time model charges decodes there for them. Set at each dispatch and finish there.",
	}, []string{"endpoint"}))
	// KVHitRatio is the share of a request's prompt blocks the chosen endpoint already held (per the active index).
	KVHitRatio = must(prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: Namespace, Name: "kv_hit_ratio",
		Help:    "Matched prompt blocks / prompt blocks on the chosen endpoint, per the active observation path.",
		Buckets: []float64{0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.99, 1},
	}, []string{"pool", "observation"}))
	// EngineCachedRatio is the share of prompt tokens the engine itself reported as cached (usage.cached_tokens).
	EngineCachedRatio = must(prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: Namespace, Name: "engine_cached_token_ratio",
		Help:    "prompt_tokens_details.cached_tokens / prompt_tokens as reported by the engine in response usage.",
		Buckets: []float64{0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.99, 1},
	}, []string{"pool"}))
	// DecisionStage is the time spent in each stage of a decision.
	DecisionStage = must(prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: Namespace, Name: "decision_stage_duration_seconds",
		Help:    "Time per decision stage: tokenize, hash, lookup (index), score (filters, scorers, picker), queue.",
		Buckets: prometheus.ExponentialBuckets(1e-6, 2.5, 16), // 1µs .. ~0.9s
	}, []string{"stage"}))
	// Rejections counts requests the router refused, by reason (the apierr type).
	Rejections = must(prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Name: "router_rejections_total",
		Help: "Requests the router refused, by reason (the error type in the response body: invalid_request_error, not_found_error, service_unavailable, AllEligibleWorkersOverloaded, queue_full, queue_timeout, request_shed).",
	}, []string{"reason"}))
	// ObservationPath is 1 for the KV observation path in use: per endpoint (predicted or events), and for
	// the pool as configured (endpoint "": auto, events or predicted).
	ObservationPath = must(prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: Namespace, Name: "kv_observation_path",
		Help: "1 for the KV-cache observation path in use: per endpoint predicted (own decisions, TTL) or events (engine KV events); endpoint=\"\" is the pool's kv.observation (auto, events, predicted).",
	}, []string{"pool", "endpoint", "path"}))
	// EventsSilent is 1 while the events path is configured but no event has arrived recently.
	EventsSilent = must(prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: Namespace, Name: "kv_events_silent",
		Help: "1 when kv.observation is events but no KV event batch arrived within kv.eventsSilenceAfter: kv routing is then load-only.",
	}, []string{"pool"}))
	// EventsUnmatched is 1 while an endpoint publishes KV events but the blocks of requests routed to it never
	// appear in its view (block size, tokenizer or seed disagree with the engine's).
	EventsUnmatched = must(prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: Namespace, Name: "kv_events_unmatched",
		Help: "1 while an endpoint's KV events arrive but the prompt blocks of requests routed to it never appear among its stored blocks: its events cannot earn cache credit.",
	}, []string{"pool", "endpoint"}))
	// TokenizerInfo names the tokenizer and whether it is exact.
	TokenizerInfo = must(prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: Namespace, Name: "tokenizer_info",
		Help: "1 for the tokenizer in use; exact=false means block hashes approximate the engine's tokens.",
	}, []string{"name", "exact"}))
	// HotPrefixCopies counts decisions that computed a hot or popular prefix on an endpoint not holding it.
	HotPrefixCopies = must(prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Name: "router_hot_prefix_copies_total",
		Help: "Requests sent to an endpoint without their longest cached prefix while router.kvCost.hotPrefixRequests or more requests in flight shared it on a holder, or while it was popular (router.kvCost.popularShare): another copy of the prefix.",
	}, []string{"pool"}))
	// SessionPins is the number of live session pins.
	SessionPins = must(prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace: Namespace, Name: "session_pins",
		Help: "Sessions currently pinned to an endpoint.",
	}))
)

// observationPaths are the values of ObservationPath's path label for the pool.
var observationPaths = []string{"predicted", "events", "auto"}

// StartPool creates a pool's state gauges at start, so dashboards and alerts see them at 0 (not absent) until
// something happens: the pool's ObservationPath (endpoint "") is 1 for the configured path and 0 for the others;
// EventsSilent starts at 0.
func StartPool(pool, observation string) {
	for _, p := range observationPaths {
		v := 0.0
		if p == observation {
			v = 1
		}
		ObservationPath.WithLabelValues(pool, "", p).Set(v)
	}
	EventsSilent.WithLabelValues(pool).Set(0)
}

// SetEndpointPath marks the observation path an endpoint is on (1) and the other (0).
func SetEndpointPath(pool, endpoint string, events bool) {
	on, off := "predicted", "events"
	if events {
		on, off = off, on
	}
	ObservationPath.WithLabelValues(pool, endpoint, on).Set(1)
	ObservationPath.WithLabelValues(pool, endpoint, off).Set(0)
}

// ForgetEndpointPath drops an endpoint's observation series once it left the pool.
func ForgetEndpointPath(pool, endpoint string) {
	l := prometheus.Labels{"pool": pool, "endpoint": endpoint}
	ObservationPath.DeletePartialMatch(l)
	EventsUnmatched.DeletePartialMatch(l)
}

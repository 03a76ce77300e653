package telemetry

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metric names other endpoint pickers export, so that dashboards and
// autoscalers built for them work on kvpick unchanged. Names, types and label
// names follow the upstream sources (checked, see README "Metrics for existing
// dashboards"):
//   - the reference picker, gateway-api-inference-extension v1.5.0
//     pkg/epp/metrics (also what llm-d-inference-scheduler exports today);
//   - NVIDIA Dynamo's frontend (lib/llm/src/kv_router/metrics.rs and the
//     frontend service names).
//
// Bucket layouts are kvpick's where a kvpick histogram already measures the
// same thing and the upstream ones otherwise: histogram_quantile works with
// either. Values come from kvpick's own accounting; the Compat* helpers below
// are called beside the matching kvpick_* metric.

// Label values kvpick cannot know the way the reference picker does.
const (
	// compatPriority is the priority label of inference_objective_request_total:
	// the reference picker's default when no InferenceObjective names the model.
	compatPriority = "0"
	// compatWorkerType is Dynamo's worker_type for an aggregated (or
	// disaggregated-decode) worker; kvpick routes aggregated serving.
	compatWorkerType = "decode"
	// compatDPRank is Dynamo's dp_rank when the endpoint has none.
	compatDPRank = "0"
)

var (
	refModelLabels = []string{"model_name", "target_model_name"}

	// Reference picker: generalLatencyBuckets (5 ms to 1 h).
	refLatencyBuckets = []float64{0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3, 4, 5, 6,
		8, 10, 15, 20, 30, 45, 60, 120, 180, 240, 300, 360, 480, 600, 900, 1200, 1800, 2700, 3600}
	refInputTokenBuckets = []float64{1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32778,
		65536, 131072, 262144, 524288, 1048576}
	refOutputTokenBuckets = []float64{1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192}
	refSchedulerBuckets   = []float64{0.0001, 0.0002, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1}
	// Dynamo: frontend TTFT buckets.
	dynamoTTFTBuckets = []float64{0, 0.0022, 0.0047, 0.01, 0.022, 0.047, 0.1, 0.22, 0.47, 1.0, 2.2, 4.7, 10,
		22, 48, 100, 220, 480}
)

// The reference picker's per-request metrics (subsystem inference_objective)
// and its scheduler latency (subsystem inference_extension).
var (
	refRequests = must(prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "inference_objective_request_total",
		Help: "Requests routed, by model and target model (reference-picker name; kvpick_requests_total has more detail).",
	}, append(refModelLabels, "priority")))
	refRequestErrors = must(prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "inference_objective_request_error_total",
		Help: "Requests refused by the picker (canonical code) or answered with an error status by the model server (status code).",
	}, append(refModelLabels, "error_code")))
	refDuration = must(prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "inference_objective_request_duration_seconds",
		Help:    "Time from the request reaching the picker to the end of its response (reference-picker name).",
		Buckets: refLatencyBuckets,
	}, refModelLabels))
	refTTFT = must(prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "inference_objective_request_ttft_seconds",
		Help:    "Time from the request reaching the picker to the first output token (reference-picker name).",
		Buckets: refLatencyBuckets,
	}, refModelLabels))
	refInputTokens = must(prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "inference_objective_input_tokens",
		Help:    "Prompt tokens per request as reported in the response usage (reference-picker name).",
		Buckets: refInputTokenBuckets,
	}, refModelLabels))
	refOutputTokens = must(prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "inference_objective_output_tokens",
		Help:    "Completion tokens per request as reported in the response usage (reference-picker name).",
		Buckets: refOutputTokenBuckets,
	}, refModelLabels))
	refRunning = must(prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "inference_objective_running_requests",
		Help: "Requests routed whose response has not ended, by model (reference-picker name).",
	}, []string{"model_name"}))
	refSchedulerE2E = must(prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "inference_extension_scheduler_e2e_duration_seconds",
		Help:    "Time to choose an endpoint for a request: filters, scorers and picker (reference-picker name).",
		Buckets: refSchedulerBuckets,
	}, []string{}))
)

// NVIDIA Dynamo frontend names.
var (
	dynQueuePending = must(prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "dynamo_frontend_router_queue_pending_requests",
		Help: "Requests waiting in the admission queue (Dynamo name; kvpick_router_queue_pending_requests per pool).",
	}, []string{"worker_type"}))
	dynQueueISL = must(prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "dynamo_frontend_router_queue_pending_isl_tokens",
		Help: "Prompt tokens of the requests waiting in the admission queue (Dynamo name).",
	}, []string{"worker_type"}))
	dynTTFT = must(prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "dynamo_frontend_time_to_first_token_seconds",
		Help:    "Time from the request reaching the picker to the first output token (Dynamo name).",
		Buckets: dynamoTTFTBuckets,
	}, []string{"model"}))
	dynPrefill = must(prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "dynamo_frontend_worker_active_prefill_tokens",
		Help: "Uncached prompt tokens routed to the worker with no first token yet (Dynamo name; worker_id is the endpoint).",
	}, []string{"worker_id", "dp_rank", "worker_type"}))
	dynDecode = must(prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "dynamo_frontend_worker_active_decode_blocks",
		Help: "KV blocks held by requests in flight on the worker (Dynamo name; worker_id is the endpoint).",
	}, []string{"worker_id", "dp_rank", "worker_type"}))
)

// CompatRouted counts a routed request and marks it running.
func CompatRouted(model string) {
	refRequests.WithLabelValues(model, model, compatPriority).Inc()
	refRunning.WithLabelValues(model).Inc()
}

// CompatRejected counts a request the picker answered itself with HTTP status code.
func CompatRejected(model string, code int) {
	refRequestErrors.WithLabelValues(model, model, CanonicalCode(code)).Inc()
}

// CompatFinished ends a routed request: it leaves the running gauge, its
// duration is observed, and an error status (>= 400) from the model server is
// counted by status code, as the reference picker does.
func CompatFinished(model string, status int, d time.Duration) {
	refRunning.WithLabelValues(model).Dec()
	refDuration.WithLabelValues(model, model).Observe(d.Seconds())
	if status >= 400 {
		refRequestErrors.WithLabelValues(model, model, strconv.Itoa(status)).Inc()
	}
}

// CompatFirstToken observes a request's time to first token.
func CompatFirstToken(model string, ttft time.Duration) {
	refTTFT.WithLabelValues(model, model).Observe(ttft.Seconds())
	dynTTFT.WithLabelValues(model).Observe(ttft.Seconds())
}

// CompatUsage observes the token counts of a response's usage.
func CompatUsage(model string, promptTokens, completionTokens int) {
	refInputTokens.WithLabelValues(model, model).Observe(float64(promptTokens))
	refOutputTokens.WithLabelValues(model, model).Observe(float64(completionTokens))
}

// CompatSchedule observes the time one scheduling pass took.
func CompatSchedule(d time.Duration) { refSchedulerE2E.WithLabelValues().Observe(d.Seconds()) }

// CompatWorkerLoad mirrors an endpoint's active work into Dynamo's per-worker gauges.
func CompatWorkerLoad(endpoint string, prefillTokens, decodeBlocks int) {
	dynPrefill.WithLabelValues(endpoint, compatDPRank, compatWorkerType).Set(float64(prefillTokens))
	dynDecode.WithLabelValues(endpoint, compatDPRank, compatWorkerType).Set(float64(decodeBlocks))
}

// CompatForgetWorker drops the per-worker series of an endpoint that left the pool.
func CompatForgetWorker(endpoint string) {
	dynPrefill.DeleteLabelValues(endpoint, compatDPRank, compatWorkerType)
	dynDecode.DeleteLabelValues(endpoint, compatDPRank, compatWorkerType)
}

// CompatQueueAdd moves Dynamo's queue gauges by deltas (queues of several
// pools add up: Dynamo's gauges carry no pool label).
func CompatQueueAdd(requests, islTokens int) {
	dynQueuePending.WithLabelValues(compatWorkerType).Add(float64(requests))
	dynQueueISL.WithLabelValues(compatWorkerType).Add(float64(islTokens))
}

// CanonicalCode maps an HTTP status the picker answers with to the reference
// picker's canonical error code (its pkg/common/error codes).
func CanonicalCode(status int) string {
	switch status {
	case 400, 413, 422:
		return "BadRequest"
	case 401:
		return "Unauthorized"
	case 403:
		return "Forbidden"
	case 404:
		return "NotFound"
	case 429:
		return "ResourceExhausted"
	case 503:
		return "ServiceUnavailable"
	case 500:
		return "Internal"
	}
	return "Unknown"
}

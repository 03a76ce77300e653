package telemetry

import "github.com/prometheus/client_golang/prometheus"

// Scrape states reported by ScrapeState; exactly one is 1 per endpoint.
const (
	ScrapeStateOK       = "ok"
	ScrapeStateStale    = "stale"
	ScrapeStateExcluded = "excluded"
)

// Reasons a scrape fails, the values of ScrapeErrors' reason label.
const (
	ScrapeReasonTimeout    = "timeout"
	ScrapeReasonHTTPStatus = "http_status"
	ScrapeReasonParse      = "parse"
	ScrapeReasonConnect    = "connect"
)

var scrapeStates = []string{ScrapeStateOK, ScrapeStateStale, ScrapeStateExcluded}

// Model-server metrics scraping (pkg/scrape).
var (
	// ScrapeDuration is the time of one scrape attempt, by engine and result
	// (ok or error).
	ScrapeDuration = must(prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: Namespace, Subsystem: "scrape", Name: "duration_seconds",
		Help:    "Duration of one model-server metrics scrape attempt.",
		Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5},
	}, []string{"engine", "result"}))
	// ScrapeErrors counts failed scrapes by endpoint and reason.
	ScrapeErrors = must(prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Subsystem: "scrape", Name: "errors_total",
		Help: "Failed model-server metrics scrapes by endpoint and reason (timeout, http_status, parse, connect).",
	}, []string{"endpoint", "reason"}))
	// ScrapeWaiting is the last scraped queue length per endpoint.
	ScrapeWaiting = must(prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: Namespace, Subsystem: "scrape", Name: "waiting_requests",
		Help: "Requests waiting in the model server's queue, as last scraped.",
	}, []string{"endpoint"}))
	// ScrapeRunning is the last scraped running-request count per endpoint.
	ScrapeRunning = must(prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: Namespace, Subsystem: "scrape", Name: "running_requests",
		Help: "Requests running in the model server's batch, as last scraped.",
	}, []string{"endpoint"}))
	// ScrapeKVUsage is the last scraped KV-cache usage (0-1) per endpoint.
	ScrapeKVUsage = must(prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: Namespace, Subsystem: "scrape", Name: "kv_cache_usage_ratio",
		Help: "KV-cache usage of the model server (0-1), as last scraped.",
	}, []string{"endpoint"}))
	// ScrapeState is 1 for the endpoint's current scrape state, 0 for the others.
	ScrapeState = must(prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: Namespace, Subsystem: "scrape", Name: "endpoint_state",
		Help: "Scrape state per endpoint: 1 for the current state (ok, stale, excluded), 0 otherwise.",
	}, []string{"endpoint", "state"}))
)

// SetScrapeState marks state as the endpoint's current scrape state.
func SetScrapeState(endpoint, state string) {
	for _, s := range scrapeStates {
		v := 0.0
		if s == state {
			v = 1
		}
		ScrapeState.WithLabelValues(endpoint, s).Set(v)
	}
}

// DeleteScrapeEndpoint drops every per-endpoint scrape series of a removed
// endpoint so that the label set does not grow without bound.
func DeleteScrapeEndpoint(endpoint string) {
	l := prometheus.Labels{"endpoint": endpoint}
	ScrapeErrors.DeletePartialMatch(l)
	ScrapeWaiting.DeletePartialMatch(l)
	ScrapeRunning.DeletePartialMatch(l)
	ScrapeKVUsage.DeletePartialMatch(l)
	ScrapeState.DeletePartialMatch(l)
}

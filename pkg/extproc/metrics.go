package extproc

import (
	"strconv"
	"sync"

	"github.com/kvpick/kvpick/pkg/telemetry"
)

// Outcomes of kvpick_requests_total.
const (
	outcomeRouted        = "routed"         // routed and the response ended below 500
	outcomeRejected      = "rejected"       // answered with an immediate error response
	outcomeUpstreamError = "upstream_error" // routed; the response status was >= 500
	outcomeCanceled      = "canceled"       // the stream ended before the response did
)

func outcomeFor(err error) string {
	if err != nil {
		return outcomeUpstreamError
	}
	return outcomeRouted
}

func countRequest(model, mode, outcome string, code int) {
	telemetry.ExtprocRequests.WithLabelValues(model, mode, outcome, strconv.Itoa(code)).Inc()
	if outcome == outcomeRejected {
		telemetry.CompatRejected(model, code)
	}
}

// maxModelLabels bounds the model label values this process creates: the model name comes from the request body,
// and a router that does not validate it (round-robin) must not let callers grow the metric series without bound.
const maxModelLabels = 256

// modelLabels is the set of model label values in use. Safe for concurrent use.
var modelLabels = boundedLabels{max: maxModelLabels}

type boundedLabels struct {
	max  int
	mu   sync.Mutex
	seen map[string]struct{}
}

// get returns v if it is (or can become) one of the admitted values, "other" once the bound is reached.
func (b *boundedLabels) get(v string) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.seen[v]; ok {
		return v
	}
	if len(b.seen) >= b.max {
		return "other"
	}
	if b.seen == nil {
		b.seen = make(map[string]struct{})
	}
	b.seen[v] = struct{}{}
	return v
}

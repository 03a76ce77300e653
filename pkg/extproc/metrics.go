package extproc

import (
	"strconv"

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
}

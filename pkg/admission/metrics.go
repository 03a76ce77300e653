package admission

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kvpick/kvpick/pkg/telemetry"
)

// queueMetrics holds one Queue's series, resolved once so the hot path does
// no label lookups. Gauges move by deltas from what this Queue last published,
// so queues sharing a pool label add up instead of overwriting each other.
type queueMetrics struct {
	pending, tokens prometheus.Gauge
	dispatched      prometheus.Counter
	waitDispatched  prometheus.Observer
	pass            prometheus.Observer
	pubLen, pubTok  int
	pool            string
}

func newQueueMetrics(pool string) *queueMetrics {
	m := &queueMetrics{
		pool:           pool,
		pending:        telemetry.QueuePendingRequests.WithLabelValues(pool),
		tokens:         telemetry.QueuePendingISLTokens.WithLabelValues(pool),
		dispatched:     telemetry.QueueDispatchedTotal.WithLabelValues(pool),
		waitDispatched: telemetry.QueueWaitSeconds.WithLabelValues(pool, "dispatched"),
		pass:           telemetry.QueuePassSeconds.WithLabelValues(pool),
	}
	// Create every rejection series at zero so dashboards see them before the first event.
	for _, r := range []string{reasonFull, reasonTimeout, reasonShed, reasonCanceled, reasonShutdown} {
		telemetry.QueueRejectionsTotal.WithLabelValues(pool, r)
	}
	return m
}

// left records an item leaving the queue: dispatched when reason is "".
func (m *queueMetrics) left(reason string, waited time.Duration) {
	if reason == "" {
		m.dispatched.Inc()
		m.waitDispatched.Observe(waited.Seconds())
		return
	}
	telemetry.QueueWaitSeconds.WithLabelValues(m.pool, reason).Observe(waited.Seconds())
	m.rejected(reason)
}

// rejected counts a request turned away (including ones that never queued).
func (m *queueMetrics) rejected(reason string) {
	telemetry.QueueRejectionsTotal.WithLabelValues(m.pool, reason).Inc()
}

func (m *queueMetrics) publish(n, tokens int) {
	telemetry.CompatQueueAdd(n-m.pubLen, tokens-m.pubTok)
	if d := n - m.pubLen; d != 0 {
		m.pending.Add(float64(d))
	}
	if d := tokens - m.pubTok; d != 0 {
		m.tokens.Add(float64(d))
	}
	m.pubLen, m.pubTok = n, tokens
}

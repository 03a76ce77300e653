package kvevents

import (
	"github.com/kvpick/kvpick/pkg/telemetry"
	"github.com/prometheus/client_golang/prometheus"
)

// metrics holds one endpoint's curried series so the receive path does no
// label lookups.
type metrics struct {
	batches, gaps, missed, replayed, decodeErrors prometheus.Counter
	restarts                                      prometheus.Counter
	stored, removed, cleared, unknown, invalid    prometheus.Counter
	connected                                     prometheus.Gauge
}

func newMetrics(ep string) metrics {
	ev := func(t string) prometheus.Counter { return telemetry.KVEventsEvents.WithLabelValues(ep, t) }
	return metrics{
		batches:      telemetry.KVEventsBatches.WithLabelValues(ep),
		gaps:         telemetry.KVEventsGaps.WithLabelValues(ep),
		restarts:     telemetry.KVEventsRestarts.WithLabelValues(ep),
		missed:       telemetry.KVEventsMissed.WithLabelValues(ep),
		replayed:     telemetry.KVEventsReplayed.WithLabelValues(ep),
		decodeErrors: telemetry.KVEventsDecodeErrors.WithLabelValues(ep),
		stored:       ev(TagBlockStored),
		removed:      ev(TagBlockRemoved),
		cleared:      ev(TagAllBlocksCleared),
		unknown:      ev("unknown"),
		invalid:      ev("invalid"),
		connected:    telemetry.KVEventsConnected.WithLabelValues(ep),
	}
}

func (m metrics) observe(b Batch, replayed bool) {
	m.batches.Inc()
	if replayed {
		m.replayed.Inc()
	}
	for _, e := range b.Events {
		switch e.(type) {
		case BlockStored:
			m.stored.Inc()
		case BlockRemoved:
			m.removed.Inc()
		case AllBlocksCleared:
			m.cleared.Inc()
		}
	}
	if b.Skipped > 0 {
		m.unknown.Add(float64(b.Skipped))
	}
	if b.Invalid > 0 {
		m.invalid.Add(float64(b.Invalid))
	}
}

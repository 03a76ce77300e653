package kvfeed

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"

	"github.com/kvpick/kvpick/pkg/telemetry"
)

// silenceWatch notices when the events path receives nothing, so kv routing
// that has silently become load-only is visible (metric and a log line).
type silenceWatch struct {
	start  time.Time
	after  time.Duration // kv.eventsSilenceAfter
	last   atomic.Int64
	mu     sync.Mutex
	silent bool
}

func newSilenceWatch(start time.Time, after time.Duration) *silenceWatch {
	return &silenceWatch{start: start, after: after}
}

func (w *silenceWatch) seen(now time.Time) { w.last.Store(now.UnixNano()) }

func (w *silenceWatch) check(now time.Time, pool string, log logr.Logger) {
	last := time.Unix(0, w.last.Load())
	if w.last.Load() == 0 {
		last = w.start
	}
	silent := now.Sub(last) > w.after
	w.mu.Lock()
	changed := silent != w.silent
	w.silent = silent
	w.mu.Unlock()
	if !changed {
		return
	}
	if silent {
		telemetry.EventsSilent.WithLabelValues(pool).Set(1)
		log.Info("WARNING: kv.observation is events but no KV event arrived within kv.eventsSilenceAfter; kv routing is load-only until events flow",
			"lastEvent", last, "eventsSilenceAfter", w.after)
		return
	}
	telemetry.EventsSilent.WithLabelValues(pool).Set(0)
	log.Info("KV events flowing again")
}

package scrape

import (
	"context"
	"sync"
	"time"

	"github.com/kvpick/kvpick/pkg/telemetry"
)

// loop is one target's polling goroutine and its last status.
type loop struct {
	target Target
	cancel context.CancelFunc // nil until started
	done   chan struct{}      // closed when the goroutine exits

	mu        sync.Mutex
	st        Status
	attempted bool
}

func (lp *loop) status() (Status, bool) {
	lp.mu.Lock()
	defer lp.mu.Unlock()
	return lp.st, lp.attempted
}

// stop cancels the loop and waits for its goroutine, so no Sink call for it
// happens afterwards.
func (lp *loop) stop() {
	if lp.cancel != nil {
		lp.cancel()
		<-lp.done
	}
}

// run scrapes immediately, then every Interval; a slow scrape delays the
// next one rather than overlapping it.
func (s *Scraper) run(ctx context.Context, lp *loop) {
	defer close(lp.done)
	tick := time.NewTicker(s.opts.Interval)
	defer tick.Stop()
	for {
		s.attempt(ctx, lp)
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// attempt does one scrape and publishes the result, unless the loop was
// cancelled meanwhile (then the failure is ours, not the endpoint's).
func (s *Scraper) attempt(ctx context.Context, lp *loop) {
	start := time.Now()
	sample, err := s.fetch(ctx, lp.target)
	if ctx.Err() != nil {
		return
	}
	now := time.Now()
	observeAttempt(lp.target, now.Sub(start), err)
	lp.mu.Lock()
	prev, first := lp.st, !lp.attempted
	next := nextStatus(prev, sample, err, now, s.opts)
	lp.st, lp.attempted = next, true
	lp.mu.Unlock()
	s.logTransition(lp.target, prev, next, first, err)
	publishTelemetry(lp.target.Key, next, err == nil)
	s.sink.UpdateScrape(lp.target.Key, next)
}

func observeAttempt(t Target, d time.Duration, err error) {
	engine := string(t.Engine)
	switch {
	case engine == "":
		engine = string(EngineVLLM)
	case !ValidEngine(t.Engine):
		engine = "unknown" // keep the label set bounded
	}
	result := "ok"
	if err != nil {
		result = "error"
		telemetry.ScrapeErrors.WithLabelValues(t.Key, reasonOf(err)).Inc()
	}
	telemetry.ScrapeDuration.WithLabelValues(engine, result).Observe(d.Seconds())
}

func publishTelemetry(key string, st Status, fresh bool) {
	if fresh {
		telemetry.ScrapeWaiting.WithLabelValues(key).Set(float64(st.Sample.Waiting))
		telemetry.ScrapeRunning.WithLabelValues(key).Set(float64(st.Sample.Running))
		telemetry.ScrapeKVUsage.WithLabelValues(key).Set(st.Sample.KVUsage)
	}
	telemetry.SetScrapeState(key, stateLabel(st))
}

func forgetTelemetry(key string) { telemetry.DeleteScrapeEndpoint(key) }

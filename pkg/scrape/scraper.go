package scrape

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/go-logr/logr"
)

// Scraper polls every target's metrics page on its own loop and reports each
// attempt to the Sink. Safe for concurrent use.
type Scraper struct {
	opts Options
	sink Sink
	log  logr.Logger

	setMu sync.Mutex // serialises SetTargets so stops and starts do not interleave

	mu      sync.Mutex
	loops   map[string]*loop
	ctx     context.Context // nil until Run, then Run's context
	stopped bool            // Run has returned
}

// New returns a Scraper; a nil sink discards updates. Nothing is polled
// until Run.
func New(opts Options, sink Sink, log logr.Logger) *Scraper {
	if sink == nil {
		sink = nopSink{}
	}
	return &Scraper{opts: opts.withDefaults(), sink: sink, log: log, loops: map[string]*loop{}}
}

type nopSink struct{}

func (nopSink) UpdateScrape(string, Status) {}

// SetTargets replaces the target set: loops of removed or changed targets are
// stopped (and have made their last Sink call) before it returns; new ones
// start now if Run is active. Targets with an empty Key are ignored; for a
// repeated Key the last wins. Must not be called from Sink.UpdateScrape.
func (s *Scraper) SetTargets(ts []Target) {
	s.setMu.Lock()
	defer s.setMu.Unlock()
	want := make(map[string]Target, len(ts))
	for _, t := range ts {
		if t.Key != "" {
			want[t.Key] = t
		}
	}
	for _, lp := range s.detach(want) {
		lp.stop()
		forgetTelemetry(lp.target.Key)
	}
	s.attach(want)
}

// detach removes loops whose target is gone or changed and returns them.
func (s *Scraper) detach(want map[string]Target) []*loop {
	s.mu.Lock()
	defer s.mu.Unlock()
	var gone []*loop
	for key, lp := range s.loops {
		if t, ok := want[key]; !ok || t != lp.target {
			gone = append(gone, lp)
			delete(s.loops, key)
		}
	}
	return gone
}

// attach adds loops for wanted targets that have none, starting them if
// Run is active.
func (s *Scraper) attach(want map[string]Target) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for key, t := range want {
		if _, ok := s.loops[key]; ok {
			continue
		}
		if !ValidEngine(t.Engine) {
			s.log.Info("unknown engine type: every scrape of this endpoint will fail", "endpoint", key, "engine", t.Engine)
		}
		lp := &loop{target: t}
		s.loops[key] = lp
		if s.ctx != nil && !s.stopped {
			s.start(lp)
		}
	}
}

// Run polls until ctx is done, then stops every loop and returns nil. It
// returns an error if called twice.
func (s *Scraper) Run(ctx context.Context) error {
	s.mu.Lock()
	if s.ctx != nil {
		s.mu.Unlock()
		return errors.New("scrape: Run called twice")
	}
	s.ctx = ctx
	for _, lp := range s.loops {
		s.start(lp)
	}
	s.mu.Unlock()
	<-ctx.Done()
	s.mu.Lock()
	s.stopped = true
	loops := make([]*loop, 0, len(s.loops))
	for _, lp := range s.loops {
		loops = append(loops, lp)
	}
	s.mu.Unlock()
	for _, lp := range loops {
		lp.stop()
	}
	return nil
}

// start launches lp's goroutine; s.mu must be held.
func (s *Scraper) start(lp *loop) {
	ctx, cancel := context.WithCancel(s.ctx)
	lp.cancel, lp.done = cancel, make(chan struct{})
	go s.run(ctx, lp)
}

// Status returns the endpoint's status as of now (Stale is re-evaluated
// against the clock); false when the key is unknown or not yet attempted.
func (s *Scraper) Status(key string) (Status, bool) {
	s.mu.Lock()
	lp, ok := s.loops[key]
	s.mu.Unlock()
	if !ok {
		return Status{}, false
	}
	st, ok := lp.status()
	st.Stale = isStale(st, time.Now(), s.opts.StaleAfter)
	return st, ok
}

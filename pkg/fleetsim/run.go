package fleetsim

import (
	"sync"
	"time"

	"github.com/kvpick/kvpick/pkg/workload"
)

// Run replays w through the policy spec builds on the fleet cfg describes.
// It is deterministic for (cfg, w, spec) apart from Result.Wall. Safe to call
// from several goroutines at once (w is only read).
func Run(cfg Config, w *workload.Workload, spec Spec) (*Result, error) {
	start := time.Now()
	s, err := newSim(cfg, w, spec)
	if err != nil {
		return nil, err
	}
	if err := s.run(); err != nil {
		return nil, err
	}
	return &Result{Policy: spec.Name, Summary: summarize(s), Records: s.recs, Series: s.series,
		Violations: s.check.errors, Wall: time.Since(start)}, nil
}

// RunAll runs every spec on the same fleet and workload, parallel at a time
// (<= 0: one), and returns the results in the order of specs. The first error
// is returned with whatever results completed.
func RunAll(cfg Config, w *workload.Workload, specs []Spec, parallel int) ([]*Result, error) {
	out := make([]*Result, len(specs))
	errs := make([]error, len(specs))
	sem := make(chan struct{}, max(parallel, 1))
	var wg sync.WaitGroup
	for i, sp := range specs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			out[i], errs[i] = Run(cfg, w, sp)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

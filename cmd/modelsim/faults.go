package main

import (
	"math/rand/v2"
	"net/http"
	"sync"
	"time"

	"github.com/kvpick/kvpick/pkg/apierr"
)

// faults injects the misbehaviour tests ask for: extra latency before a
// request enters the engine, and failed requests. Safe for concurrent use;
// with a fixed seed the sequence of decisions is reproducible.
type faults struct {
	mu           sync.Mutex
	rng          *rand.Rand
	jitter       time.Duration
	failFraction float64
	failStatus   int
}

func newFaults(seed int64, jitter time.Duration, failFraction float64, failStatus int) *faults {
	return &faults{rng: rand.New(rand.NewPCG(uint64(seed), 0x6661756c7473)), jitter: jitter,
		failFraction: failFraction, failStatus: failStatus}
}

// delay returns a uniform latency in [0, jitter).
func (f *faults) delay() time.Duration {
	if f.jitter <= 0 {
		return 0
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return time.Duration(f.rng.Int64N(int64(f.jitter)))
}

// failure returns the injected error for this request, or nil.
func (f *faults) failure() error {
	if f.failFraction <= 0 {
		return nil
	}
	f.mu.Lock()
	hit := f.rng.Float64() < f.failFraction
	f.mu.Unlock()
	if !hit {
		return nil
	}
	typ := apierr.TypeInternal
	if f.failStatus == http.StatusServiceUnavailable {
		typ = apierr.TypeUnavailable
	}
	return apierr.New(f.failStatus, typ, "modelsim: injected failure (--fail-fraction)")
}

// Package fleetsim replays a workload against a simulated fleet of model
// servers in virtual time. Each endpoint is a pkg/engine instance; each
// arrival goes through a Policy — the picker's real router (scheduler,
// admission, KV index, active work) or a baseline — exactly as in
// production, with scraped load and (optionally delayed) KV events fed back.
// One discrete-event loop drives everything; nothing sleeps or reads the
// wall clock, so a run is deterministic for its workload and seed.
package fleetsim

import (
	"errors"
	"fmt"
	"time"

	"github.com/kvpick/kvpick/pkg/engine"
)

// Config describes the simulated fleet.
type Config struct {
	// Engines configures one endpoint each (heterogeneous capacities allowed).
	Engines []engine.Config
	// Model is the model every endpoint serves (default "sim-model").
	Model string
	// ScrapeInterval is how often each endpoint's load is scraped (default 100ms).
	ScrapeInterval time.Duration
	// EventsDelay is how long a KV event takes to reach the picker (default
	// 50ms; negative means at once).
	EventsDelay time.Duration
	// TickInterval is the picker's upkeep period (default 1s).
	TickInterval time.Duration
	// SampleInterval is the time-series sampling period (default 1s).
	SampleInterval time.Duration
	// TTFTTarget is the TTFT objective reported against (default 1s).
	TTFTTarget time.Duration
	// Seed seeds the policies' random choices (default 1).
	Seed int64
	// ClientMaxTokens is the max_tokens every client sends (0: none). The
	// engine still stops at the workload's true output length, as a model
	// stops at its end-of-sequence token; policies only see this cap.
	ClientMaxTokens int
	// Horizon aborts a run whose virtual time passes the last arrival by this
	// much (default 6h): a guard against a fleet that stopped making progress.
	Horizon time.Duration
}

// Fleet returns n endpoints of engine configuration c.
func Fleet(n int, c engine.Config) []engine.Config {
	out := make([]engine.Config, n)
	for i := range out {
		out[i] = c
	}
	return out
}

func (c *Config) setDefaults() {
	if c.Model == "" {
		c.Model = "sim-model"
	}
	def := func(p *time.Duration, v time.Duration) {
		if *p <= 0 {
			*p = v
		}
	}
	def(&c.ScrapeInterval, 100*time.Millisecond)
	def(&c.TickInterval, time.Second)
	def(&c.SampleInterval, time.Second)
	def(&c.TTFTTarget, time.Second)
	def(&c.Horizon, 6*time.Hour)
	if c.EventsDelay == 0 {
		c.EventsDelay = 50 * time.Millisecond
	} else if c.EventsDelay < 0 {
		c.EventsDelay = 0
	}
	if c.Seed == 0 {
		c.Seed = 1
	}
}

func (c *Config) validate() error {
	if len(c.Engines) == 0 {
		return errors.New("fleetsim: no engines")
	}
	if len(c.Engines) > 250 {
		return fmt.Errorf("fleetsim: %d engines, at most 250", len(c.Engines))
	}
	var errs []error
	for i, e := range c.Engines {
		if err := e.Validate(); err != nil {
			errs = append(errs, fmt.Errorf("engines[%d]: %w", i, err))
		}
	}
	return errors.Join(errs...)
}

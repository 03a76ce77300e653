// Package scheduler scores: it filters, scores and picks endpoints for one
// request; pkg/router decides (prepares, admits, asks this package, records).
// It is pure: a Request plus a slice of Candidates (each endpoint's load,
// active work and cached prefix, gathered by the caller) gives an ordered
// choice, with no I/O and no shared state other than the round-robin cursor
// and the random source. Router modes (config router.mode) are presets of
// small plugins (filters, scorers and a picker), and users can compose their
// own profile.
package scheduler

import (
	"github.com/kvpick/kvpick/pkg/activework"
	"github.com/kvpick/kvpick/pkg/costmodel"
	"github.com/kvpick/kvpick/pkg/endpoints"
)

// Request is what selection needs to know about one request.
type Request struct {
	Model string
	LoRA  string
	// PromptTokens is the prompt length; Blocks the full blocks of BlockSize in it.
	PromptTokens int
	Blocks       int
	BlockSize    int
	// Subset is the proxy's subset hint; SubsetPresent distinguishes an empty
	// hint (answer 503) from no hint (whole pool).
	Subset        []string
	SubsetPresent bool
	// Override names the endpoint in direct mode.
	Override string
	// Pinned is the session's endpoint, used when still eligible.
	Pinned string
	// NewSession marks the first request of a session: where it goes, the
	// session's later requests follow.
	NewSession bool
	// Queued marks a request that waited in the admission queue: the fleet
	// was full when it came.
	Queued bool
	// Popular marks a request whose longest cached prefix is popular
	// (router.kvCost.popularShare) for the candidates that hold it: the time
	// model judges an endpoint with no prefill queued as if it held the
	// prefix, so the prefix gets another holder.
	Popular bool
}

// Candidate is one endpoint's state for this decision.
type Candidate struct {
	Entry    *endpoints.Entry
	Load     endpoints.Load
	Capacity endpoints.Capacity
	Active   activework.Counts
	// CachedBlocks is how many leading prompt blocks the endpoint holds.
	CachedBlocks int
	// Sharers is how many requests in flight there share the cached prefix
	// (filled where the time model's hot-prefix rule needs it: on the
	// candidates holding the longest prefix).
	Sharers int
	// Rates are the endpoint's learned engine rates for the time cost model;
	// zero means the configured ones.
	Rates costmodel.Rates
	// Sessions is the live session pins on the endpoint, filled for a
	// session's first request: their later requests will come here.
	// SessionRunning is the running requests they are expected to keep
	// there (pins times the pool's running requests per pin).
	Sessions       int
	SessionRunning float64
	// PrefillRate is the uncached prompt tokens per second recently
	// dispatched there (router.kvCost.prefillPressureWindow; 0 when off):
	// the prefills a request decoding there will share its steps with.
	PrefillRate float64
}

// Key is the candidate's "ip:port".
func (c *Candidate) Key() string { return c.Entry.Key() }

// CachedTokens is the prompt prefix the endpoint need not compute.
func (c *Candidate) CachedTokens(r *Request) int {
	return min(c.CachedBlocks*r.BlockSize, r.PromptTokens)
}

// Load signal used for ties and by load-only modes: requests this picker has
// in flight there plus requests the engine reports waiting from elsewhere.
func (c *Candidate) loadSignal() int {
	w := 0
	if c.Load.Fresh {
		w = c.Load.Waiting
	}
	return c.Active.Requests + w
}

// Result is a decision: candidate indices in preference order (primary first).
type Result struct {
	Order []int
	// Scores holds each candidate's combined score (higher is better); nil for
	// modes that do not score.
	Scores []float64
	// Pinned reports that the session's endpoint was used.
	Pinned bool
}

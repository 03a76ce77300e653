package scheduler

import (
	"net/http"
	"slices"

	"github.com/kvpick/kvpick/pkg/apierr"
)

// DefaultMaxBatchedTokens stands in for an endpoint whose max_num_batched_tokens
// is unknown: vLLM's default on large GPUs.
const DefaultMaxBatchedTokens = 8192

// Busy holds the exclusion thresholds; nil fields are off.
type Busy struct {
	DecodeBlocksFrac  *float64
	PrefillTokens     *int
	PrefillTokensFrac *float64
}

// IsBusy reports whether c is past any threshold (OR-combined). The decode
// threshold counts only KV-holding work (requests past their first token):
// a request waiting in the engine's own queue holds no KV.
func (b Busy) IsBusy(c *Candidate) bool {
	if b.DecodeBlocksFrac != nil && c.Capacity.TotalBlocks > 0 &&
		float64(c.Active.HeldBlocks()) > *b.DecodeBlocksFrac*float64(c.Capacity.TotalBlocks) {
		return true
	}
	if b.PrefillTokens != nil && c.Active.PrefillTokens > *b.PrefillTokens {
		return true
	}
	return b.PrefillTokensFrac != nil && float64(c.Active.PrefillTokens) > *b.PrefillTokensFrac*float64(MaxBatched(c))
}

// MaxBatched is c's per-step token budget, defaulted when unknown.
func MaxBatched(c *Candidate) int {
	if c.Capacity.MaxBatchedTokens > 0 {
		return c.Capacity.MaxBatchedTokens
	}
	return DefaultMaxBatchedTokens
}

// Filter narrows the candidates in place (keeping order) or explains why none is left.
type Filter interface {
	Name() string
	Filter(r *Request, in []Candidate) ([]Candidate, error)
}

type modelFilter struct{}

func (modelFilter) Name() string { return "model" }
func (modelFilter) Filter(r *Request, in []Candidate) ([]Candidate, error) {
	out := keep(in, func(c *Candidate) bool { return r.Model == "" || c.Entry.Serves(r.Model, r.LoRA) })
	if len(out) == 0 && len(in) > 0 {
		if r.LoRA != "" {
			return nil, apierr.NotFound("no endpoint serves LoRA adapter %q", r.LoRA)
		}
		return nil, apierr.NotFound("model %q is not served by any endpoint in the pool", r.Model)
	}
	return out, nil
}

type subsetFilter struct{}

func (subsetFilter) Name() string { return "subset" }
func (subsetFilter) Filter(r *Request, in []Candidate) ([]Candidate, error) {
	if !r.SubsetPresent {
		return in, nil
	}
	out := keep(in, func(c *Candidate) bool { return slices.Contains(r.Subset, c.Key()) })
	if len(out) == 0 {
		return nil, apierr.Unavailable("no eligible endpoint in the subset hint %v", r.Subset)
	}
	return out, nil
}

type healthFilter struct{}

func (healthFilter) Name() string { return "health" }
func (healthFilter) Filter(_ *Request, in []Candidate) ([]Candidate, error) {
	out := keep(in, func(c *Candidate) bool { return !c.Load.Excluded })
	if len(out) == 0 && len(in) > 0 {
		return nil, apierr.Unavailable("no healthy endpoint: all %d eligible endpoints are failing metric scrapes", len(in))
	}
	return out, nil
}

type busyFilter struct{ b Busy }

func (busyFilter) Name() string { return "busy" }
func (f busyFilter) Filter(_ *Request, in []Candidate) ([]Candidate, error) {
	out := keep(in, func(c *Candidate) bool { return !f.b.IsBusy(c) })
	if len(out) == 0 && len(in) > 0 {
		return nil, &apierr.Error{Status: http.StatusServiceUnavailable, Type: apierr.TypeOverloaded,
			Message: "all eligible endpoints are overloaded (busy thresholds exceeded)"}
	}
	return out, nil
}

// keep filters in place: the input slice's backing array is reused.
func keep(in []Candidate, ok func(*Candidate) bool) []Candidate {
	out := in[:0]
	for i := range in {
		if ok(&in[i]) {
			out = append(out, in[i])
		}
	}
	return out
}

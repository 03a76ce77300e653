package scheduler

import (
	"fmt"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"

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
	ports := poolPorts(in)
	out := keep(in, func(c *Candidate) bool { return inSubset(r.Subset, c, ports) })
	if len(out) == 0 {
		return nil, apierr.Unavailable("no eligible endpoint in the subset hint %v", r.Subset)
	}
	return out, nil
}

// poolPorts are the ports the pool's endpoints listen on (its target ports).
func poolPorts(in []Candidate) map[string]bool {
	ports := make(map[string]bool, 2)
	for i := range in {
		ports[strconv.Itoa(in[i].Entry.Port)] = true
	}
	return ports
}

// inSubset reports whether a hint entry names c: its ip:port exactly, or, as
// the reference picker matches hints, its IP when the entry's port is none of
// the pool's target ports (a hint built from another port of the pod, or an
// IP without a port).
func inSubset(subset []string, c *Candidate, ports map[string]bool) bool {
	if slices.Contains(subset, c.Key()) {
		return true
	}
	for _, e := range subset {
		host, port, err := net.SplitHostPort(e)
		if err != nil {
			host, port = e, ""
		}
		if host == c.Entry.Address && !ports[port] {
			return true
		}
	}
	return false
}

type healthFilter struct{}

func (healthFilter) Name() string { return "health" }
func (healthFilter) Filter(_ *Request, in []Candidate) ([]Candidate, error) {
	out := keep(in, func(c *Candidate) bool { return !c.Load.Excluded })
	if len(out) == 0 && len(in) > 0 {
		return nil, apierr.Unavailable("all %d eligible endpoints excluded (failing metric scrapes): %s", len(in), exclusionCauses(in))
	}
	return out, nil
}

// exclusionCauses names why the first few excluded endpoints were excluded,
// so a 503 says what to fix (a wrong metrics path, an unreachable pod).
func exclusionCauses(in []Candidate) string {
	const shown = 3
	var b strings.Builder
	for i := range in[:min(len(in), shown)] {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "scrape %s: %s", in[i].Key(), in[i].Load.Reason)
	}
	if len(in) > shown {
		fmt.Fprintf(&b, "; and %d more", len(in)-shown)
	}
	return b.String()
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

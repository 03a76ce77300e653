// Package workload describes request streams for routing benchmarks: a
// request is an arrival time, a prompt made of deterministic token segments
// (requests that share leading segments share a token prefix) and an output
// length. Sources are the Mooncake trace format and synthetic generators
// (shared-prefix groups, multi-turn sessions, long-document bursts) over
// Poisson or bursty arrivals. Everything is deterministic for a seed.
package workload

import (
	"slices"
	"sort"
	"time"
)

// Segment is a run of Len deterministic tokens named by ID and Variant. Two
// segments with the same ID and Variant expand to the same tokens (a shorter
// one to a prefix of them). Variants of one ID have different tokens (each
// token shifted by the variant), so a trace replayed as variant r shares no
// prefix with its other replays while reusing one cached expansion.
type Segment struct {
	ID      uint64
	Len     int
	Variant uint32
}

// key identifies the segment's token content.
func (s Segment) key() uint64 {
	if s.Variant == 0 {
		return s.ID
	}
	return mix64(s.ID ^ mix64(uint64(s.Variant)))
}

// Request is one request of a workload. Values are immutable once built.
type Request struct {
	// ID is the request's index in its workload, in arrival order.
	ID int
	// Arrival is the offset from the start of the run.
	Arrival time.Duration
	// Segments make up the prompt, in order.
	Segments []Segment
	// Output is the number of tokens to generate.
	Output int
	// Session is the session id (multi-turn); "" when none.
	Session string
	// Class labels the request's kind (e.g. "shared", "document") for breakdowns.
	Class string
}

// InputLen is the prompt length in tokens.
func (r *Request) InputLen() int {
	n := 0
	for _, s := range r.Segments {
		n += s.Len
	}
	return n
}

// Workload is a request list in arrival order.
type Workload struct {
	Name     string
	Requests []Request
}

// Merge combines workloads into one, ordered by arrival (stable: ties keep
// the argument order), with IDs renumbered.
func Merge(name string, parts ...[]Request) Workload {
	var all []Request
	for _, p := range parts {
		all = append(all, p...)
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].Arrival < all[j].Arrival })
	for i := range all {
		all[i].ID = i
	}
	return Workload{Name: name, Requests: all}
}

// Stats summarises a workload.
type Stats struct {
	Requests              int
	Span                  time.Duration
	MeanInput, MeanOutput float64
	// PrefixUpperBound is the prefix-hit ratio an infinite single cache would
	// reach: leading segments already seen in an earlier prompt, over all tokens.
	PrefixUpperBound float64
}

// Stats computes the workload's summary.
func (w Workload) Stats() Stats {
	st := Stats{Requests: len(w.Requests)}
	if len(w.Requests) == 0 {
		return st
	}
	st.Span = w.Requests[len(w.Requests)-1].Arrival - w.Requests[0].Arrival
	seen := newPrefixSet()
	var in, out, hit int
	for i := range w.Requests {
		r := &w.Requests[i]
		in += r.InputLen()
		out += r.Output
		hit += seen.matchAndAdd(r.Segments)
	}
	st.MeanInput = float64(in) / float64(len(w.Requests))
	st.MeanOutput = float64(out) / float64(len(w.Requests))
	if in > 0 {
		st.PrefixUpperBound = float64(hit) / float64(in)
	}
	return st
}

// prefixSet remembers every segment-chain prefix seen.
type prefixSet map[[2]uint64]int

func newPrefixSet() prefixSet { return prefixSet{} }

// matchAndAdd returns the tokens of segs's longest seen prefix (counting a
// segment when an earlier prompt held the same chain up to it with at least
// as many tokens) and records segs.
func (p prefixSet) matchAndAdd(segs []Segment) int {
	var parent uint64
	hit, matching := 0, true
	for _, s := range segs {
		key := [2]uint64{parent, s.key()}
		if n, ok := p[key]; matching && ok {
			hit += min(n, s.Len)
			matching = n >= s.Len
		} else {
			matching = false
		}
		if p[key] < s.Len {
			p[key] = s.Len
		}
		parent = mix64(parent ^ s.key())
	}
	return hit
}

// Jitter returns a copy of w with every arrival moved later by a uniform
// random amount in [0, max), drawn from seed, back in arrival order (ties
// keep their order) and renumbered. Prompts, outputs and sessions stay as
// they are. A queueing system's tail answers to small shifts in timing
// (which request lands in which engine step), so replaying one workload
// under several jitter seeds measures how much of a difference between two
// policies at one seed is that chaos rather than the policies; max at or
// below zero returns w unchanged. w's requests are not modified.
func (w Workload) Jitter(max time.Duration, seed int64) Workload {
	if max <= 0 {
		return w
	}
	rng := NewRand(seed, jitterStream)
	reqs := slices.Clone(w.Requests)
	for i := range reqs {
		reqs[i].Arrival += time.Duration(rng.Int64N(int64(max)))
	}
	return Merge(w.Name, reqs)
}

// jitterStream keeps Jitter's draws apart from the generators' own streams
// for the same seed.
const jitterStream = 0x6a6974746572

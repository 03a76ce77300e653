package workload

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"time"
)

// Segment namespaces of the synthetic generators.
const (
	nsPrefix = iota + 100
	nsSuffix
	nsUnshared
	nsSystem
	nsTurn
	nsDocument
)

// SharedPrefix is requests of which Share reuse one of Prefixes shared
// prefixes (chosen uniformly, or by rank with exponent Zipf) followed by a
// unique suffix; the rest carry an unrelated prompt of UnsharedLen tokens.
type SharedPrefix struct {
	Requests    int
	Prefixes    int
	PrefixLen   int
	SuffixLen   int
	Share       float64
	UnsharedLen int // default PrefixLen + SuffixLen
	// Zipf, when positive, draws prefix k (0-based) with probability in
	// proportion to 1/(k+1)^Zipf, as real traffic favours a few system
	// prompts; 0 draws them uniformly.
	Zipf     float64
	Output   int
	Arrivals Arrivals
	Start    time.Duration
	// Namespace separates this generator's segments from another's (e.g. two
	// phases that must not share prefixes use different values).
	Namespace uint64
}

// Generate builds the requests deterministically from seed.
func (g SharedPrefix) Generate(seed int64) ([]Request, error) {
	if err := g.validate(); err != nil {
		return nil, err
	}
	rng := NewRand(seed, 1+g.Namespace)
	times := g.Arrivals.Times(rng, g.Requests, g.Start)
	unshared := g.UnsharedLen
	if unshared <= 0 {
		unshared = g.PrefixLen + g.SuffixLen
	}
	ns := g.Namespace * 1000
	pick := prefixPicker(g.Prefixes, g.Zipf)
	out := make([]Request, g.Requests)
	for i := range out {
		r := Request{Arrival: times[i], Output: g.Output}
		if rng.Float64() < g.Share {
			p := uint64(pick(rng))
			r.Class = "shared"
			r.Segments = []Segment{{ID: SegmentID(ns+nsPrefix, p), Len: g.PrefixLen}, {ID: SegmentID(ns+nsSuffix, uint64(i)), Len: g.SuffixLen}}
		} else {
			r.Class = "unshared"
			r.Segments = []Segment{{ID: SegmentID(ns+nsUnshared, uint64(i)), Len: unshared}}
		}
		r.Segments = dropEmpty(r.Segments)
		out[i] = r
	}
	return out, nil
}

func (g SharedPrefix) validate() error {
	if g.Requests < 0 || g.Prefixes <= 0 || g.PrefixLen < 0 || g.SuffixLen < 0 || g.PrefixLen+g.SuffixLen <= 0 ||
		g.Output <= 0 || g.Share < 0 || g.Share > 1 || g.Arrivals.Rate <= 0 {
		return fmt.Errorf("shared-prefix: invalid parameters %+v", g)
	}
	if !(g.Zipf >= 0 && g.Zipf <= maxZipf) { // NaN fails both
		return fmt.Errorf("shared-prefix: zipf exponent %v outside [0, %d]", g.Zipf, maxZipf)
	}
	return nil
}

// maxZipf bounds SharedPrefix.Zipf: past it nearly every request takes the
// first prefix, which -prefixes 1 says more plainly.
const maxZipf = 10

// prefixPicker draws a prefix index in [0, n): uniformly when s is 0 (one
// IntN call, as before Zipf existed, so uniform workloads keep their
// requests), else by rank with exponent s through the cumulative weights.
func prefixPicker(n int, s float64) func(*rand.Rand) int {
	if s == 0 {
		return func(rng *rand.Rand) int { return rng.IntN(n) }
	}
	cdf := make([]float64, n)
	total := 0.0
	for k := range cdf {
		total += math.Pow(float64(k+1), -s)
		cdf[k] = total
	}
	return func(rng *rand.Rand) int {
		x := rng.Float64() * total
		return min(sort.SearchFloat64s(cdf, x), n-1)
	}
}

func dropEmpty(segs []Segment) []Segment {
	out := segs[:0]
	for _, s := range segs {
		if s.Len > 0 {
			out = append(out, s)
		}
	}
	return out
}

// MultiTurn is chat sessions: each starts at an arrival of Arrivals and runs
// Turns turns ThinkTime apart (open loop). Turn k's prompt is the shared
// system prompt, every earlier user message and answer, then the new user
// message, so each turn extends the previous turn's prefix.
type MultiTurn struct {
	Sessions  int
	Turns     int
	SystemLen int
	UserLen   int
	Output    int // answer length; earlier answers enter later prompts
	ThinkTime time.Duration
	Arrivals  Arrivals
	Start     time.Duration
}

// Generate builds the requests deterministically from seed.
func (g MultiTurn) Generate(seed int64) ([]Request, error) {
	if g.Sessions < 0 || g.Turns <= 0 || g.SystemLen < 0 || g.UserLen <= 0 || g.Output <= 0 || g.Arrivals.Rate <= 0 || g.ThinkTime < 0 {
		return nil, fmt.Errorf("multiturn: invalid parameters %+v", g)
	}
	rng := NewRand(seed, 2)
	starts := g.Arrivals.Times(rng, g.Sessions, g.Start)
	var out []Request
	for s := range g.Sessions {
		history := dropEmpty([]Segment{{ID: SegmentID(nsSystem, 0), Len: g.SystemLen}})
		t := starts[s]
		for k := range g.Turns {
			turn := uint64(s)<<16 | uint64(k)
			user := Segment{ID: SegmentID(nsTurn, 2*turn), Len: g.UserLen}
			segs := append(append(make([]Segment, 0, len(history)+1), history...), user)
			out = append(out, Request{Arrival: t, Segments: segs, Output: g.Output,
				Session: fmt.Sprintf("session-%d", s), Class: "turn"})
			history = append(segs, Segment{ID: SegmentID(nsTurn, 2*turn+1), Len: g.Output})
			t += time.Duration((0.5 + rng.Float64()) * float64(g.ThinkTime))
		}
	}
	return out, nil
}

// Burst is a long-document import: Documents unrelated prompts of DocLen
// tokens arriving uniformly within Window from Start.
type Burst struct {
	Documents int
	DocLen    int
	Output    int
	Start     time.Duration
	Window    time.Duration
}

// Generate builds the requests deterministically from seed.
func (g Burst) Generate(seed int64) ([]Request, error) {
	if g.Documents < 0 || g.DocLen <= 0 || g.Output <= 0 || g.Window < 0 {
		return nil, fmt.Errorf("burst: invalid parameters %+v", g)
	}
	rng := NewRand(seed, 3)
	out := make([]Request, g.Documents)
	for i := range out {
		at := g.Start + time.Duration(rng.Float64()*float64(g.Window))
		out[i] = Request{Arrival: at, Output: g.Output, Class: "import",
			Segments: []Segment{{ID: SegmentID(nsDocument, uint64(i)), Len: g.DocLen}}}
	}
	return out, nil
}

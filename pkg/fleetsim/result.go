package fleetsim

import (
	"math"
	"slices"
	"time"
)

// Result is one policy's run.
type Result struct {
	Policy  string
	Summary Summary
	Records []Record
	Series  []Sample
	// Violations lists broken invariants (empty for a correct run).
	Violations []string
	// Wall is how long the run took in real time.
	Wall time.Duration
}

// Summary is the table row of a run. Latencies are in seconds.
type Summary struct {
	Policy             string         `json:"policy"`
	Requests           int            `json:"requests"`
	Completed          int            `json:"completed"`
	Rejected           int            `json:"rejected"`
	RejectedBy         map[string]int `json:"rejectedBy,omitempty"`
	TTFTP50            float64        `json:"ttftP50"`
	TTFTP95            float64        `json:"ttftP95"`
	TTFTP99            float64        `json:"ttftP99"`
	E2EP50             float64        `json:"e2eP50"`
	E2EP99             float64        `json:"e2eP99"`
	RequestsPerSec     float64        `json:"requestsPerSec"`
	OutputTokensPerSec float64        `json:"outputTokensPerSec"`
	PrefixHit          float64        `json:"prefixHit"`
	MaxQueue           int            `json:"maxQueue"`
	MaxEngineWaiting   int            `json:"maxEngineWaiting"`
	OverTarget         float64        `json:"overTarget"`
	Preemptions        int            `json:"preemptions"`
	MakespanSeconds    float64        `json:"makespanSeconds"`
	TTFTTargetSeconds  float64        `json:"ttftTargetSeconds"`
	MaxQueuedTokens    int            `json:"maxQueuedTokens"`
	DispatchSpread     []int          `json:"dispatchSpread"`
}

// summarize computes the table row from the records. Throughput is over the
// span from the first arrival to the last finish. The prefix-hit ratio is the
// engines' cached prompt tokens over prompt tokens of completed requests.
// OverTarget counts rejected requests as missing the target.
func summarize(sm *sim) Summary {
	recs, nodes, target := sm.recs, sm.nodes, sm.cfg.TTFTTarget
	s := Summary{Policy: sm.name, Requests: len(recs), RejectedBy: map[string]int{}, TTFTTargetSeconds: target.Seconds(),
		DispatchSpread: make([]int, len(nodes)), MaxQueue: sm.maxQueue, MaxQueuedTokens: sm.maxQueuedTokens}
	var ttft, e2e []float64
	var prompt, cached, out, over int
	var first, last time.Duration = math.MaxInt64, 0
	for i := range recs {
		r := &recs[i]
		first, last = min(first, r.Arrival), max(last, r.Finish)
		s.Preemptions += r.Preemptions
		if r.Endpoint >= 0 {
			s.DispatchSpread[r.Endpoint]++
		}
		if !r.Completed() {
			s.Rejected++
			s.RejectedBy[r.Rejected]++
			over++
			continue
		}
		s.Completed++
		ttft, e2e = append(ttft, r.TTFT().Seconds()), append(e2e, r.E2E().Seconds())
		prompt, cached, out = prompt+r.Prompt, cached+r.Cached, out+r.Generated
		if r.TTFT() > target {
			over++
		}
	}
	slices.Sort(ttft)
	slices.Sort(e2e)
	s.TTFTP50, s.TTFTP95, s.TTFTP99 = quantile(ttft, 0.5), quantile(ttft, 0.95), quantile(ttft, 0.99)
	s.E2EP50, s.E2EP99 = quantile(e2e, 0.5), quantile(e2e, 0.99)
	if span := (last - first).Seconds(); span > 0 {
		s.MakespanSeconds = span
		s.RequestsPerSec, s.OutputTokensPerSec = float64(s.Completed)/span, float64(out)/span
	}
	if prompt > 0 {
		s.PrefixHit = float64(cached) / float64(prompt)
	}
	if len(recs) > 0 {
		s.OverTarget = float64(over) / float64(len(recs))
	}
	for _, n := range nodes {
		s.MaxEngineWaiting = max(s.MaxEngineWaiting, n.maxWaiting)
	}
	if len(s.RejectedBy) == 0 {
		s.RejectedBy = nil
	}
	return s
}

// quantile of sorted xs by linear interpolation; 0 when empty (JSON has no NaN).
func quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	pos := q * float64(len(xs)-1)
	lo := int(pos)
	if lo >= len(xs)-1 {
		return xs[len(xs)-1]
	}
	return xs[lo] + (pos-float64(lo))*(xs[lo+1]-xs[lo])
}

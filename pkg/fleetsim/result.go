package fleetsim

import (
	"encoding/json"
	"fmt"
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

// Summary is the table row of a run. Latencies are in seconds. TTFT and E2E
// percentiles count every request, a refused one (429/503, see
// Record.Refused) as +Inf: its client never saw a token. A request the
// engine rejects as invalid (400: longer than max_model_len) is rejected
// by every policy alike and left out. The Served* figures count served
// requests only and are labelled so wherever they are shown.
type Summary struct {
	Policy             string         `json:"policy"`
	Requests           int            `json:"requests"`
	Completed          int            `json:"completed"`
	Rejected           int            `json:"rejected"`
	RejectedBy         map[string]int `json:"rejectedBy,omitempty"`
	TTFTP50            Seconds        `json:"ttftP50"`
	TTFTP95            Seconds        `json:"ttftP95"`
	TTFTP99            Seconds        `json:"ttftP99"`
	E2EP50             Seconds        `json:"e2eP50"`
	E2EP99             Seconds        `json:"e2eP99"`
	ServedTTFTP50      float64        `json:"servedTtftP50"`
	ServedTTFTP95      float64        `json:"servedTtftP95"`
	ServedTTFTP99      float64        `json:"servedTtftP99"`
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
	var ttft, e2e, served []float64
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
			if r.Refused() {
				ttft, e2e = append(ttft, math.Inf(1)), append(e2e, math.Inf(1))
			}
			s.Rejected++
			s.RejectedBy[r.Rejected]++
			over++
			continue
		}
		s.Completed++
		ttft, e2e = append(ttft, r.TTFT().Seconds()), append(e2e, r.E2E().Seconds())
		served = append(served, r.TTFT().Seconds())
		prompt, cached, out = prompt+r.Prompt, cached+r.Cached, out+r.Generated
		if r.TTFT() > target {
			over++
		}
	}
	slices.Sort(ttft)
	slices.Sort(e2e)
	slices.Sort(served)
	q := func(xs []float64, p float64) Seconds { return Seconds(quantile(xs, p)) }
	s.TTFTP50, s.TTFTP95, s.TTFTP99 = q(ttft, 0.5), q(ttft, 0.95), q(ttft, 0.99)
	s.E2EP50, s.E2EP99 = q(e2e, 0.5), q(e2e, 0.99)
	s.ServedTTFTP50, s.ServedTTFTP95, s.ServedTTFTP99 = quantile(served, 0.5), quantile(served, 0.95), quantile(served, 0.99)
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

// quantile of sorted xs by linear interpolation; 0 when empty (JSON has no
// NaN). xs may end in +Inf: a quantile that touches one is +Inf.
func quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	pos := q * float64(len(xs)-1)
	lo := int(pos)
	if lo >= len(xs)-1 {
		return xs[len(xs)-1]
	}
	if frac := pos - float64(lo); frac > 0 {
		if math.IsInf(xs[lo+1], 1) {
			return xs[lo+1] // interpolating toward +Inf is +Inf (and Inf-Inf would be NaN)
		}
		return xs[lo] + frac*(xs[lo+1]-xs[lo])
	}
	return xs[lo] // no 0*Inf
}

// Seconds is a latency that may be +Inf (a refused request); JSON writes
// +Inf as the string "+Inf", which encoding/json cannot do for a float.
type Seconds float64

// MarshalJSON writes a number, or "+Inf".
func (s Seconds) MarshalJSON() ([]byte, error) {
	if math.IsInf(float64(s), 1) {
		return []byte(`"+Inf"`), nil
	}
	return json.Marshal(float64(s))
}

// UnmarshalJSON reads what MarshalJSON writes.
func (s *Seconds) UnmarshalJSON(b []byte) error {
	if string(b) == `"+Inf"` {
		*s = Seconds(math.Inf(1))
		return nil
	}
	var f float64
	if err := json.Unmarshal(b, &f); err != nil {
		return fmt.Errorf("seconds: %w", err)
	}
	*s = Seconds(f)
	return nil
}

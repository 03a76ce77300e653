// Package costmodel holds the engine rates the kv time cost model predicts
// with, and learns each endpoint's own online from what the picker observes
// on the response path: time to first token with the engine's usage report
// (prompt and cached tokens), inter-token times, output lengths. It starts
// from configured rates (an engine profile), and each observation moves the
// learned rates by a bounded step, so noise and traffic that did not pass
// through this picker bend them without breaking them.
package costmodel

import v1 "github.com/kvpick/kvpick/api/v1alpha1"

// Rates are one endpoint's engine rates, in seconds and tokens.
type Rates struct {
	// PrefillTokensPerSec is short-prompt prefill throughput.
	PrefillTokensPerSec float64
	// StepOverhead, DecodePerSeq and DecodePerContextToken make a step's
	// time: overhead + running*perSeq + context tokens held*perContextToken.
	StepOverhead, DecodePerSeq, DecodePerContextToken float64
	// AttentionLen: a prompt of L tokens costs L*(1+L/AttentionLen) tokens.
	AttentionLen float64
	// OutputTokens is the expected output length of a request.
	OutputTokens float64
	// SessionRequests is the mean number of requests a session sends (1
	// before any session was seen).
	SessionRequests float64
}

// FromConfig converts configured (defaulted) rates.
func FromConfig(c v1.CostRates) Rates {
	sec := func(d *v1.Duration) float64 {
		if d == nil {
			return 0
		}
		return d.Seconds()
	}
	return Rates{PrefillTokensPerSec: c.PrefillTokensPerSec, StepOverhead: sec(c.StepOverhead),
		DecodePerSeq: sec(c.DecodePerSeq), DecodePerContextToken: sec(c.DecodePerContextToken),
		AttentionLen: float64(c.AttentionLen), OutputTokens: float64(c.DefaultOutputTokens)}
}

// PrefillWork is the cost of computing prompt positions [start, start+n) in
// short-prompt token equivalents (a token at position p costs 1+2p/AttentionLen).
func (r *Rates) PrefillWork(start, n int) float64 {
	w := float64(max(n, 0))
	if r.AttentionLen > 0 && n > 0 {
		s, e := float64(start), float64(start+n)
		w += (e*e - s*s) / r.AttentionLen
	}
	return w
}

// PrefillSeconds is the time to compute work token equivalents.
func (r *Rates) PrefillSeconds(work float64) float64 {
	if r.PrefillTokensPerSec <= 0 {
		return 0
	}
	return work / r.PrefillTokensPerSec
}

// Step is one engine step's time besides its prefill chunks, with running
// requests holding contextTokens of KV between them.
func (r *Rates) Step(running, contextTokens int) float64 {
	return r.StepOverhead + float64(running)*r.DecodePerSeq + float64(contextTokens)*r.DecodePerContextToken
}

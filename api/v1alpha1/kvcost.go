package v1alpha1

import "time"

// Cost models for router.kvCost.model.
const (
	CostModelTime   = "time"
	CostModelBlocks = "blocks"
)

// CostRates are an engine's rates as the time cost model sees them. The
// defaults describe one Qwen3-32B replica on 2x H100 (TP2) under vLLM, the
// same figures pkg/engine cites; each endpoint's rates are then learned
// online, so a heterogeneous fleet needs no per-endpoint configuration.
type CostRates struct {
	// PrefillTokensPerSec is the prefill throughput (default 15,928: the
	// llm-d project's Qwen3-32B TP2 recipe). Too high a start favours
	// affinity until the first observations correct it.
	PrefillTokensPerSec float64 `json:"prefillTokensPerSec,omitempty"`
	// StepOverhead is an engine step's fixed time (default 10ms: one read of
	// the weights).
	StepOverhead *Duration `json:"stepOverhead,omitempty"`
	// DecodePerSeq is what each running request adds to a step (default 20µs).
	DecodePerSeq *Duration `json:"decodePerSeq,omitempty"`
	// DecodePerContextToken is what each token of context held adds to a
	// step (default 39ns: 128 KiB of KV per token per GPU at 3.35 TB/s).
	DecodePerContextToken *Duration `json:"decodePerContextToken,omitempty"`
	// AttentionLen: a prompt of L tokens costs L*(1+L/AttentionLen) tokens of
	// prefill (default 60,000; causal attention against the weights' FLOPs).
	AttentionLen int `json:"attentionLen,omitempty"`
	// LearnRate is the weight of each new observation in the learned rates
	// (default 0.05). Higher follows changes faster and noise more.
	LearnRate *float64 `json:"learnRate,omitempty"`
	// DefaultOutputTokens is the output length assumed before any response
	// was seen and when a request sends no max_tokens (default 128).
	DefaultOutputTokens int `json:"defaultOutputTokens,omitempty"`
}

func (k *KVCost) setTimeDefaults() {
	setStr(&k.Model, CostModelTime)
	if k.PrefillWeight == nil {
		k.PrefillWeight = ptr(2.0)
	}
	if k.DecodeWeight == nil {
		k.DecodeWeight = ptr(0.2)
	}
	if k.CommonHolders == nil {
		k.CommonHolders = ptr(2)
	}
	if k.HotPrefixRequests == nil {
		k.HotPrefixRequests = ptr(3)
	}
	if k.SessionLoad == nil {
		k.SessionLoad = ptr(false)
	}
	if k.PopularShare == nil {
		k.PopularShare = ptr(0.15)
	}
	if k.PopularWindow == nil {
		k.PopularWindow = &Duration{time.Minute}
	}
	if k.PrefillPressureWindow == nil {
		k.PrefillPressureWindow = &Duration{30 * time.Second}
	}
	if k.BalanceBound == nil {
		k.BalanceBound = &Duration{time.Second}
	}
	r := &k.Rates
	if r.PrefillTokensPerSec == 0 {
		r.PrefillTokensPerSec = 15928
	}
	dur := func(p **Duration, d time.Duration) {
		if *p == nil {
			*p = &Duration{d}
		}
	}
	dur(&r.StepOverhead, 10*time.Millisecond)
	dur(&r.DecodePerSeq, 20*time.Microsecond)
	dur(&r.DecodePerContextToken, 39*time.Nanosecond)
	if r.AttentionLen == 0 {
		r.AttentionLen = 60000
	}
	if r.LearnRate == nil {
		r.LearnRate = ptr(0.05)
	}
	if r.DefaultOutputTokens == 0 {
		r.DefaultOutputTokens = 128
	}
}

func (k *KVCost) validateTime(p *problems) {
	if k.Model != CostModelTime && k.Model != CostModelBlocks {
		p.add("router.kvCost.model", "must be %q or %q, got %q", CostModelTime, CostModelBlocks, k.Model)
	}
	nonNeg(p, "router.kvCost.decodeWeight", k.DecodeWeight)
	nonNeg(p, "router.kvCost.prefillWeight", k.PrefillWeight)
	if h := k.CommonHolders; h != nil && (*h < 0 || *h == 1) {
		p.add("router.kvCost.commonHolders", "must be 0 (off) or at least 2, got %d", *h)
	}
	if h := k.HotPrefixRequests; h != nil && *h < 0 {
		p.add("router.kvCost.hotPrefixRequests", "must be 0 (off) or positive, got %d", *h)
	}
	nonNeg(p, "router.kvCost.popularShare", k.PopularShare)
	if k.PopularWindow != nil && k.PopularWindow.Duration <= 0 {
		p.add("router.kvCost.popularWindow", "must be positive, got %v", k.PopularWindow.Duration)
	}
	if k.PrefillPressureWindow != nil && k.PrefillPressureWindow.Duration < 0 {
		p.add("router.kvCost.prefillPressureWindow", "must not be negative (0s: off), got %v", k.PrefillPressureWindow.Duration)
	}
	if k.BalanceBound != nil && k.BalanceBound.Duration < 0 {
		p.add("router.kvCost.balanceBound", "must not be negative, got %v", k.BalanceBound.Duration)
	}
	r := &k.Rates
	if !(r.PrefillTokensPerSec > 0) {
		p.add("router.kvCost.rates.prefillTokensPerSec", "must be positive, got %v", r.PrefillTokensPerSec)
	}
	for _, d := range []struct {
		path string
		v    *Duration
	}{{"stepOverhead", r.StepOverhead}, {"decodePerSeq", r.DecodePerSeq}, {"decodePerContextToken", r.DecodePerContextToken}} {
		if d.v != nil && d.v.Duration < 0 {
			p.add("router.kvCost.rates."+d.path, "must not be negative, got %v", d.v.Duration)
		}
	}
	if r.AttentionLen < 0 {
		p.add("router.kvCost.rates.attentionLen", "must not be negative, got %d", r.AttentionLen)
	}
	if r.LearnRate != nil && (*r.LearnRate <= 0 || *r.LearnRate > 1) {
		p.add("router.kvCost.rates.learnRate", "must be in (0, 1], got %v", *r.LearnRate)
	}
	if r.DefaultOutputTokens < 0 {
		p.add("router.kvCost.rates.defaultOutputTokens", "must not be negative, got %d", r.DefaultOutputTokens)
	}
}

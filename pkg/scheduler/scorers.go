package scheduler

import "slices"

// Scorer rates every candidate; higher is better. Scores of different
// scorers are combined as a weighted sum, so each keeps to [0, 1] except the
// kv cost, whose scale is the point (it is the negated cost in blocks).
type Scorer interface {
	Name() string
	Score(r *Request, cands []Candidate, out []float64)
}

// KVCost weighs the kv cost model.
type KVCost struct {
	OverlapWeight       float64
	ActiveRequestWeight float64
}

// Cost is the kv cost of sending r to c, in blocks:
//
//	prefill = active prefill tokens + uncached prompt tokens
//	decode  = active decode blocks + blocks the request adds
//	cost    = overlapWeight*prefill/B + decode + activeRequestWeight*requests
//
// Engine-reported KV usage stands in for active decode blocks when it is
// larger (traffic that did not pass through this picker). Cache credit only
// lowers the request's own prefill, so a busy endpoint stays costly.
func (k KVCost) Cost(r *Request, c *Candidate) float64 {
	b := float64(max(r.BlockSize, 1))
	prefill := float64(c.Active.PrefillTokens + r.PromptTokens - c.CachedTokens(r))
	decode := float64(max(c.Active.DecodeBlocks, externalBlocks(c)) + r.Blocks - min(c.CachedBlocks, r.Blocks))
	if r.PromptTokens%max(r.BlockSize, 1) != 0 {
		decode++ // the partial last block is held too
	}
	return k.OverlapWeight*prefill/b + decode + k.ActiveRequestWeight*float64(c.Active.Requests)
}

func externalBlocks(c *Candidate) int {
	if !c.Load.Fresh || c.Capacity.TotalBlocks == 0 {
		return 0
	}
	return int(c.Load.KVUsage * float64(c.Capacity.TotalBlocks))
}

type kvOverlapScorer struct{}

func (kvOverlapScorer) Name() string { return "kv-overlap" }
func (kvOverlapScorer) Score(r *Request, cands []Candidate, out []float64) {
	for i := range cands {
		if r.Blocks > 0 {
			out[i] = float64(min(cands[i].CachedBlocks, r.Blocks)) / float64(r.Blocks)
		} else {
			out[i] = 0
		}
	}
}

// inverseScorer scores 1 for the smallest value among candidates and 0 for the
// largest, linearly: load-like signals where fewer is better.
type inverseScorer struct {
	name  string
	value func(*Candidate) float64
}

func (s inverseScorer) Name() string { return s.name }
func (s inverseScorer) Score(_ *Request, cands []Candidate, out []float64) {
	lo, hi := 0.0, 0.0
	for i := range cands {
		v := s.value(&cands[i])
		out[i] = v
		if i == 0 || v < lo {
			lo = v
		}
		if i == 0 || v > hi {
			hi = v
		}
	}
	for i := range out[:len(cands)] {
		if hi == lo {
			out[i] = 1
		} else {
			out[i] = (hi - out[i]) / (hi - lo)
		}
	}
}

var (
	prefillTokensScorer  = inverseScorer{"prefill-tokens", func(c *Candidate) float64 { return float64(c.Active.PrefillTokens) }}
	decodeBlocksScorer   = inverseScorer{"decode-blocks", func(c *Candidate) float64 { return float64(c.Active.DecodeBlocks) }}
	activeRequestsScorer = inverseScorer{"active-requests", func(c *Candidate) float64 { return float64(c.loadSignal()) }}
	queueDepthScorer     = inverseScorer{"queue-depth", func(c *Candidate) float64 {
		if !c.Load.Fresh {
			return 0
		}
		return float64(c.Load.Waiting)
	}}
)

// kvUtilizationScorer is 1 - engine KV usage: absolute, not relative to the
// other candidates, so two nearly full endpoints both score low. Without a
// fresh sample the endpoint scores as empty (nothing known against it).
type kvUtilizationScorer struct{}

func (kvUtilizationScorer) Name() string { return "kv-utilization" }
func (kvUtilizationScorer) Score(_ *Request, cands []Candidate, out []float64) {
	for i := range cands {
		out[i] = 1
		if cands[i].Load.Fresh {
			out[i] = 1 - min(max(cands[i].Load.KVUsage, 0), 1)
		}
	}
}

type loraAffinityScorer struct{}

func (loraAffinityScorer) Name() string { return "lora-affinity" }
func (loraAffinityScorer) Score(r *Request, cands []Candidate, out []float64) {
	for i := range cands {
		out[i] = 0
		if r.LoRA != "" && slices.Contains(cands[i].Load.RunningLoRA, r.LoRA) {
			out[i] = 1
		}
	}
}

type sessionScorer struct{}

func (sessionScorer) Name() string { return "session-affinity" }
func (sessionScorer) Score(r *Request, cands []Candidate, out []float64) {
	for i := range cands {
		out[i] = 0
		if r.Pinned != "" && cands[i].Key() == r.Pinned {
			out[i] = 1
		}
	}
}

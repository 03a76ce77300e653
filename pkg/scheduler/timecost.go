package scheduler

import (
	"math"

	v1 "github.com/kvpick/kvpick/api/v1alpha1"
	"github.com/kvpick/kvpick/pkg/costmodel"
)

// TimeCost is the kv cost in seconds (router.kvCost.model "time"): the
// request's predicted time to first token on an endpoint, plus PrefillWeight
// times its own prefill time (what it delays later arrivals by), plus
// DecodeWeight times the decode slowdown it and the endpoint's running
// requests cause each other, its prefill's stall of their steps included.
// One block of pending prefill (about a millisecond of GPU time) and one
// block held by a running request (microseconds per step) weigh what they
// cost, unlike the blocks formula.
type TimeCost struct {
	// Base are the configured rates, used where a candidate has none learned.
	Base         costmodel.Rates
	DecodeWeight float64
	// PrefillWeight counts the request's own prefill time again: the GPU
	// time it takes delays everything that arrives behind it there. Not for
	// a session's first request: where it goes, its later turns go too, so
	// the load they bring (Decode, times the session's requests, and the
	// pinned sessions' crowding) is what placing it decides, and a one-off
	// cache saving counted twice pulled new sessions together (routebench's
	// multiturn p99: 0.121 s with it, 0.115 s without, at seed 1).
	PrefillWeight float64
	// CommonHolders is router.kvCost.commonHolders: PrefillWeight is not
	// charged for the part of a prompt that at least this many candidates
	// hold (see CommonBlocks and charged); 0 charges it always.
	CommonHolders int
	// HotRequests is router.kvCost.hotPrefixRequests: see hotPrefix; 0
	// turns it off.
	HotRequests int
	// SessionLoad is router.kvCost.sessionLoad: a session's first request
	// carries the decode of the requests that will follow it and sees the
	// endpoint's pinned sessions as running (sessionCrowd).
	SessionLoad bool
}

// Prediction is what TimeCost expects of sending a request to an endpoint.
type Prediction struct {
	// TTFT is the predicted time to first token in seconds; Decode the
	// decode slowdown in request-seconds (see TimeCost), of which Stall is
	// what the request's own prefill adds to the batch it joins.
	TTFT, Decode, Stall float64
	// QueuedTokens is the prefill ahead of the request; Steps the engine
	// steps until its first token; StepSeconds their non-prefill time.
	QueuedTokens, Steps int
	StepSeconds         float64
	// Running and ContextTokens are the decode batch the request joins.
	Running, ContextTokens int
	// Own is the request's own prefill time, in seconds (part of TTFT).
	Own float64
	// Pressure is how much the prefills expected there stretch the
	// request's own decode, in seconds (part of Decode; see prefillPressure).
	Pressure float64
}

// Rates returns c's rates, the base ones when c has none learned.
func (t TimeCost) Rates(c *Candidate) costmodel.Rates {
	if c.Rates.PrefillTokensPerSec > 0 {
		return c.Rates
	}
	return t.Base
}

// Predict models r on c. Prefill ahead of r is this picker's active prefill
// tokens; the decode batch is the larger of this picker's in-flight requests
// and the engine's scraped running count, holding the larger of their
// context and the engine's reported KV usage (traffic from elsewhere).
func (t TimeCost) Predict(r *Request, c *Candidate) Prediction {
	rt := t.Rates(c)
	cached := c.CachedTokens(r)
	uncached := r.PromptTokens - cached
	p := Prediction{QueuedTokens: c.Active.PrefillTokens}
	p.Running, p.ContextTokens = Batch(c, r.BlockSize)
	session := r.NewSession && t.SessionLoad
	if session {
		sessionCrowd(&p, c.SessionRunning, r.PromptTokens)
	}
	mb := MaxBatched(c)
	p.Steps = max(1, (p.QueuedTokens+uncached+mb-1)/mb)
	p.StepSeconds = float64(p.Steps) * rt.Step(p.Running, p.ContextTokens)
	p.Own = rt.PrefillSeconds(rt.PrefillWork(cached, uncached))
	p.TTFT = rt.PrefillSeconds(float64(p.QueuedTokens)) + p.Own + p.StepSeconds
	// r slows each running request by its own per-step cost; they slow r by theirs.
	mine := rt.DecodePerSeq + float64(r.PromptTokens)*rt.DecodePerContextToken
	theirs := float64(p.Running)*rt.DecodePerSeq + float64(p.ContextTokens)*rt.DecodePerContextToken
	p.Decode = rt.OutputTokens * (float64(p.Running)*mine + theirs)
	if session {
		p.Decode *= max(rt.SessionRequests, 1) // the session's later requests follow this one
	}
	// The engine runs the request's prefill chunks in the same steps as the
	// batch's decodes (chunked prefill), so every request in the batch waits
	// out its prefill time once: the generation stall of a long uncached
	// prompt, which per-token decode costs miss. Routebench's Mooncake trace:
	// kv's end-to-end p99 17.4 s without it, 14.9 s with it (least-queue's
	// 14.8 s), as long prompts stop landing beside long decodes.
	p.Stall = float64(p.Running) * p.Own
	p.Pressure = prefillPressure(rt, c.PrefillRate, rt.OutputTokens*rt.Step(p.Running+1, p.ContextTokens+r.PromptTokens))
	p.Decode += p.Stall + p.Pressure
	return p
}

// Batch is the decode batch running on c: the larger of this picker's
// in-flight requests and the engine's scraped running count, holding the
// larger of their context and the engine's reported KV usage in blocks of
// blockSize tokens (traffic from elsewhere).
func Batch(c *Candidate, blockSize int) (running, contextTokens int) {
	running, contextTokens = c.Active.Requests, c.Active.ContextTokens
	if c.Load.Fresh {
		running = max(running, c.Load.Running)
		contextTokens = max(contextTokens, externalBlocks(c)*max(blockSize, 1))
	}
	return running, contextTokens
}

// maxPressure caps the share of an endpoint's time its prefills are taken
// to fill: past it the rate says the endpoint is saturated, not how long.
const maxPressure = 0.9

// prefillPressure is how much the prefills coming to an endpoint at
// tokensPerSec stretch a decode of decode seconds there. Chunked prefill
// runs them in the decode's steps: if they take a share rho of the
// endpoint's time, the decode gets 1-rho of it and lasts decode/(1-rho).
// This is the other side of the stall a request's own prefill puts on the
// running batch: with the stall alone, cold prompts go where few requests
// run, and the requests that come there next to decode share their steps
// with those prompts' successors.
func prefillPressure(rt costmodel.Rates, tokensPerSec, decode float64) float64 {
	if tokensPerSec <= 0 || rt.PrefillTokensPerSec <= 0 {
		return 0
	}
	rho := min(tokensPerSec/rt.PrefillTokensPerSec, maxPressure)
	return decode * rho / (1 - rho)
}

// Cost is r's time cost on c in seconds, where common blocks of r are held
// by at least CommonHolders candidates (CommonBlocks). A session's first
// request carries the decode load of the requests that will follow it
// (session affinity pins them to the same endpoint), and its own prefill
// only once (see PrefillWeight).
func (t TimeCost) Cost(r *Request, c *Candidate, common int) float64 {
	return t.cost(r, c, t.Predict(r, c), spread{common: common})
}

// spread is where else r's prefix is held, for the charges that depend on it.
type spread struct {
	common     int     // CommonBlocks
	hot        int     // a hot prefix (hotPrefix); 0 for none
	holderTTFT float64 // the best predicted TTFT among the hot prefix's holders
	longest    int     // LongestHeld, for a popular prefix (Request.Popular)
}

func (t TimeCost) cost(r *Request, c *Candidate, p Prediction, sp spread) float64 {
	w := t.PrefillWeight
	if r.NewSession {
		w = 0
	}
	upTo := sp.common
	second := sp.hot > c.CachedBlocks && p.QueuedTokens == 0 && p.TTFT <= sp.holderTTFT
	if second {
		upTo = max(upTo, sp.hot)
	}
	popular := !second && r.Popular && sp.longest > c.CachedBlocks && p.QueuedTokens == 0
	if popular {
		upTo = max(upTo, sp.longest)
	}
	charged := t.charged(r, c, upTo, p.Own)
	if second { // its batch waits out only the part beyond the hot prefix
		p.Decode += float64(p.Running)*charged - p.Stall
	}
	// A popular prefix's copy is judged as if the endpoint held the prefix
	// (see Request.Popular), but for the stall: its batch does wait out the
	// whole prefill, so copies go where few requests run. Without that,
	// routebench's 40 hot prefixes lost 12 % at end-to-end p99.
	if popular {
		p.TTFT -= p.Own - charged
	}
	return p.TTFT + w*charged + t.DecodeWeight*p.Decode
}

// charged is the part of r's own prefill time on c that PrefillWeight
// counts: all of it, less what computing a prefix of upTo blocks that
// other candidates hold takes there: a common prefix (one CommonHolders
// candidates hold), or a hot one whose holders are busy (hotPrefix). Either
// is paid once and spreads the traffic that needs the prefix, so it is not
// a delay to charge for as recomputing a prefix one endpoint holds is. Its
// own time to first token still counts it, queue included.
func (t TimeCost) charged(r *Request, c *Candidate, upTo int, own float64) float64 {
	if upTo <= c.CachedBlocks {
		return own
	}
	rt := t.Rates(c)
	tokens := min(upTo*r.BlockSize, r.PromptTokens)
	return rt.PrefillSeconds(rt.PrefillWork(tokens, r.PromptTokens-tokens))
}

// hotPrefix returns the longest prefix of r that candidates hold, in blocks,
// when at least HotRequests requests in flight share it on one of its
// holders, and the best predicted TTFT among those holders; 0 otherwise.
// Where such a prefix lives on one endpoint, its requests queue there
// behind whatever prefill that endpoint is doing (routebench's burst, 8
// prefixes on 8 endpoints: shared requests' p95 0.22 s before the import,
// where a second copy serves them at 0.06 s). So an endpoint with no
// prefill queued that would answer no later than the holders is not charged
// PrefillWeight, nor the stall of its batch, for computing the hot prefix: a
// second copy is an investment the prefix's next requests share. Only where
// no prefill waits, as a copy's GPU time is otherwise taken from the
// requests waiting there (a soak-shaped load at 80 % of the fleet's prefill,
// 16 short prefixes: p95 +6 % with copies anywhere, -2 % with this rule); and
// not for a request that waited in the admission queue, for the same reason
// fleet-wide (the burst's documents waited 0.5 s longer).
func (t TimeCost) hotPrefix(r *Request, cands []Candidate, preds []Prediction) (int, float64) {
	if r.Queued {
		return 0, 0
	}
	held := HotPrefix(cands, t.HotRequests)
	if held == 0 {
		return 0, 0
	}
	best := math.Inf(1)
	for i := range cands {
		if cands[i].CachedBlocks == held {
			best = min(best, preds[i].TTFT)
		}
	}
	return held, best
}

// HotPrefix is the longest prefix of the request the candidates hold, in
// blocks, when at least k requests in flight share it on one of its
// holders (Candidate.Sharers); 0 when it is not hot, none is held, or k is 0.
func HotPrefix(cands []Candidate, k int) int {
	held := LongestHeld(cands)
	if k <= 0 || held == 0 {
		return 0
	}
	for i := range cands {
		if cands[i].CachedBlocks == held && cands[i].Sharers >= k {
			return held
		}
	}
	return 0
}

// LongestHeld is the longest prefix of the request any candidate holds, in
// blocks.
func LongestHeld(cands []Candidate) int {
	held := 0
	for i := range cands {
		held = max(held, cands[i].CachedBlocks)
	}
	return held
}

// CommonBlocks is the longest prefix of the request that at least k of
// cands hold, in blocks (the k-th largest CachedBlocks; 0 when k is 0 or
// exceeds the candidates).
func CommonBlocks(cands []Candidate, k int) int {
	if k <= 0 || k > len(cands) {
		return 0
	}
	var small [8]int // the k largest so far, descending; most pools need no allocation
	top := small[:0]
	if k > len(small) {
		top = make([]int, 0, k)
	}
	for i := range cands {
		b := cands[i].CachedBlocks
		if len(top) == k && b <= top[k-1] {
			continue
		}
		if len(top) < k {
			top = append(top, b)
		} else {
			top[k-1] = b
		}
		for j := len(top) - 1; j > 0 && top[j] > top[j-1]; j-- {
			top[j], top[j-1] = top[j-1], top[j]
		}
	}
	if len(top) < k {
		return 0
	}
	return top[k-1]
}

// balanced applies the balance bound to costs: a candidate whose predicted
// TTFT exceeds the best by more than bound seconds costs more than every
// candidate within it, so it is chosen only when nothing else is left.
// bound <= 0 leaves costs alone.
func balanced(bound float64, preds []Prediction, cost []float64) {
	if bound <= 0 || len(preds) < 2 {
		return
	}
	best, worst := preds[0].TTFT, 0.0
	for i := range preds {
		best = min(best, preds[i].TTFT)
		worst = max(worst, cost[i])
	}
	for i := range preds {
		if ttft := preds[i].TTFT; ttft > best+bound {
			cost[i] += worst + ttft // past every in-bound cost, ordered by TTFT
		}
	}
}

// costScorer scores by a cost model (lower is better), with the balance
// bound judged on predicted TTFT whichever model prices the candidates.
type costScorer struct {
	name   string
	blocks *KVCost // Dynamo's formula; nil for the time model
	t      TimeCost
	bound  float64
}

func (s costScorer) Name() string { return s.name }
func (s costScorer) Score(r *Request, cands []Candidate, out []float64) {
	var buf [16]Prediction // one per candidate, shared by the cost and the bound
	preds := buf[:0]
	if s.blocks == nil || s.bound > 0 {
		if len(cands) > len(buf) {
			preds = make([]Prediction, 0, len(cands))
		}
		for i := range cands {
			preds = append(preds, s.t.Predict(r, &cands[i]))
		}
	}
	if s.blocks != nil {
		for i := range cands {
			out[i] = s.blocks.Cost(r, &cands[i])
		}
	} else {
		sp := spread{common: CommonBlocks(cands, s.t.CommonHolders), longest: LongestHeld(cands)}
		sp.hot, sp.holderTTFT = s.t.hotPrefix(r, cands, preds)
		for i := range cands {
			out[i] = s.t.cost(r, &cands[i], preds[i], sp)
		}
	}
	balanced(s.bound, preds, out[:len(cands)])
	for i := range cands {
		out[i] = -out[i]
	}
}

// kvCostFor builds the kv cost scorer router.kvCost configures.
func kvCostFor(c v1.KVCost) Scorer {
	t := TimeCost{Base: costmodel.FromConfig(c.Rates), DecodeWeight: *c.DecodeWeight, PrefillWeight: *c.PrefillWeight}
	if c.CommonHolders != nil {
		t.CommonHolders = *c.CommonHolders
	}
	if c.HotPrefixRequests != nil {
		t.HotRequests = *c.HotPrefixRequests
	}
	if c.SessionLoad != nil {
		t.SessionLoad = *c.SessionLoad
	}
	bound := 0.0
	if c.BalanceBound != nil {
		bound = c.BalanceBound.Seconds()
	}
	if c.Model == v1.CostModelBlocks { // Dynamo's formula as it is: no common or hot prefix rules
		k := &KVCost{OverlapWeight: *c.OverlapWeight, ActiveRequestWeight: *c.ActiveRequestWeight}
		return costScorer{name: "kv-cost", blocks: k, t: t, bound: bound}
	}
	return costScorer{name: "kv-time-cost", t: t, bound: bound}
}

// sessionCrowd adds to a new session's view of the decode batch the
// requests the endpoint's pinned sessions are expected to keep running
// there (at the context per request running now, or the request's own
// prompt when nothing runs). Sessions between turns run nothing at the
// moment of choice, yet their next turns come back to the same endpoint:
// by current load alone new sessions crowd onto endpoints whose sessions
// happen to be thinking. Adding rather than taking the larger of the two is
// pessimistic (a pinned session running now counts twice); it measured
// better on routebench's multiturn scenario at every seed.
func sessionCrowd(p *Prediction, expected float64, prompt int) {
	n := int(math.Round(expected))
	if n <= 0 {
		return
	}
	per := prompt
	if p.Running > 0 {
		per = p.ContextTokens / p.Running
	}
	p.ContextTokens += n * per
	p.Running += n
}

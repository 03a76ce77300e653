package router

import (
	"time"

	"github.com/kvpick/kvpick/pkg/costmodel"
	"github.com/kvpick/kvpick/pkg/scheduler"
)

// itlWindow is how many output tokens an inter-token observation spans:
// fewer would feed the learner a call per token.
const itlWindow = 16

// rates is the router's side of the time cost model: the learner fed from
// decisions' lifecycles and the predictor that says what a decision expects.
type rates struct {
	learner *costmodel.Learner
	model   scheduler.TimeCost
}

func (r *Router) initRates() {
	k := r.cfg.Router.KVCost
	base := costmodel.FromConfig(k.Rates)
	alpha := 0.05
	if k.Rates.LearnRate != nil {
		alpha = *k.Rates.LearnRate
	}
	w := 0.0
	if k.DecodeWeight != nil {
		w = *k.DecodeWeight
	}
	// The same predictions the scorer makes (weights do not matter to them;
	// sessionLoad does, through a new session's batch).
	model := scheduler.TimeCost{Base: base, DecodeWeight: w, SessionLoad: k.SessionLoad != nil && *k.SessionLoad}
	r.rates = &rates{learner: costmodel.NewLearner(base, alpha, r.deps.Pool, r.deps.Log, r.deps.Now), model: model}
}

// Learner is the online rate learner (for metrics and tests).
func (r *Router) Learner() *costmodel.Learner { return r.rates.learner }

// fillRates gives each candidate its endpoint's learned rates.
func (r *Router) fillRates(cands []scheduler.Candidate) {
	for i := range cands {
		cands[i].Rates = r.rates.learner.Rates(cands[i].Key())
	}
}

// expectation is what a decision predicted for its primary, kept to learn
// from its lifecycle.
type expectation struct {
	pred      scheduler.Prediction
	blockSize int // the request's, to read the engine's KV usage in tokens
	sent      time.Time
	first     time.Time
	lastAt    time.Time
	lastN     int
	ttft      float64
	joined    int64 // uncached tokens started on the endpoint between dispatch and first token
}

// expect records what the time model predicts for p on its chosen primary.
func (r *Router) expect(p *Prepared, c *scheduler.Candidate, now time.Time) *expectation {
	return &expectation{pred: r.rates.model.Predict(&p.Req, c), sent: now, blockSize: p.Req.BlockSize}
}

// learnFirst notes the first token's time.
func (d *Decision) learnFirst(now time.Time) {
	if e := d.expect; e != nil && e.first.IsZero() {
		e.first, e.lastAt = now, now
		e.ttft = now.Sub(e.sent).Seconds()
		e.joined = d.handle.Joined()
	}
}

// learnProgress feeds an inter-token time every itlWindow tokens.
func (d *Decision) learnProgress(tokens int, now time.Time) {
	e := d.expect
	if e == nil || e.first.IsZero() || tokens-e.lastN < itlWindow {
		return
	}
	itl := now.Sub(e.lastAt).Seconds() / float64(tokens-e.lastN)
	e.lastAt, e.lastN = now, tokens
	// Steps that also ran prefill chunks say nothing about decode steps: learn
	// only while the endpoint has no prefill pending (as far as this picker knows).
	if step := d.r.stepNow(d.handle.Endpoint(), e.blockSize); step > 0 {
		d.r.rates.learner.ObserveITL(d.handle.Endpoint(), itl, step)
	}
}

// stepNow is one decode step's time on endpoint at the configured rates,
// for the batch running there now (the learned scale is observed over
// configured), or 0 while prefill is pending there or it left the pool.
// The batch at the observation, not at the request's dispatch: that one had
// changed by the time the tokens came, and the conversation trace's
// endpoints learned step scales of 0.79-1.05 from it on an engine at its
// profile; against the batch now, 1.001-1.010.
func (r *Router) stepNow(endpoint string, blockSize int) float64 {
	counts := r.deps.Active.Counts(endpoint)
	if counts.PrefillTokens > 0 {
		return 0
	}
	e, ok := r.deps.Set.Snapshot().Get(endpoint)
	if !ok {
		return 0
	}
	c := scheduler.Candidate{Entry: e, Load: e.Load(), Capacity: e.Capacity(), Active: counts}
	running, ctx := scheduler.Batch(&c, blockSize)
	return r.rates.model.Base.Step(max(running, 1), ctx)
}

// learnUsage feeds the first-token observation, if timed, with the engine's
// own prompt and cached counts, and the output length.
func (d *Decision) learnUsage(prompt, cached, completion int) {
	e := d.expect
	if e == nil {
		return
	}
	l := d.r.rates.learner
	if e.ttft > 0 { // a timed first token (not one seen only at a non-streamed response's end)
		l.ObserveTTFT(d.handle.Endpoint(), costmodel.TTFT{Observed: e.ttft, Predicted: e.pred.TTFT,
			QueuedTokens: e.pred.QueuedTokens, PromptTokens: prompt, CachedTokens: cached, StepSeconds: e.pred.StepSeconds, JoinedTokens: e.joined})
	}
	l.ObserveOutput(completion)
}

package costmodel

import (
	"math"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/kvpick/kvpick/pkg/telemetry"
)

// Bounds of learning: one observation moves a rate by at most a factor of 2
// (before the learning rate), and a learned rate stays within 8x of the
// configured one, so a few outliers (a request queued behind traffic this
// picker never saw) cannot run the model away.
const (
	maxStepLog  = math.Ln2
	maxScaleLog = 3 * math.Ln2
	// warnAfter observations with a mean error past 2x, the learner logs.
	warnAfter = 20
	warnEvery = time.Minute
)

// Learner learns per-endpoint Rates online. Safe for concurrent use.
type Learner struct {
	mu    sync.Mutex
	base  Rates
	alpha float64
	pool  string
	log   logr.Logger
	now   func() time.Time
	eps   map[string]*learned
	out   float64 // learned mean output tokens (all endpoints)
	// sessions and sessionReqs count new sessions and requests carrying a
	// session id, for the mean requests per session.
	sessions, sessionReqs float64
	// learnedScales sums the scales of endpoints that have learned one. An
	// endpoint not yet observed starts optimistic: at the configured profile
	// or the pool's mean, whichever is faster. Starting at the profile alone,
	// one endpoint learned to be faster than the profile would win every tie
	// against its unobserved twins, which would never be tried; starting at
	// the pool's mean alone, a fast endpoint among slow ones would never be
	// discovered while cache credit holds traffic elsewhere.
	learnedScales poolScales
}

// poolScales holds running sums of learned log scales (and how many
// endpoints contribute to each).
type poolScales struct {
	prefill, step   float64
	prefillN, stepN int
}

// start is where an unobserved endpoint's log scales begin (positive is
// slower than the profile): the pool's mean when faster, else the profile.
func (p *poolScales) start() (prefill, step float64) {
	if p.prefillN > 0 {
		prefill = min(p.prefill/float64(p.prefillN), 0)
	}
	if p.stepN > 0 {
		step = min(p.step/float64(p.stepN), 0)
	}
	return prefill, step
}

// learned is one endpoint's state: log scales of prefill time and step time
// relative to the base rates, and the running prediction error.
type learned struct {
	prefillLog, stepLog float64
	errLog              float64 // EWMA of |log(observed/predicted)| TTFT
	n                   int
	prefillSeen         bool // prefillLog was learned (else the pool's mean stands in)
	stepSeen            bool // stepLog was learned
	warned              time.Time
}

// NewLearner starts every endpoint at base, moving by alpha per observation.
func NewLearner(base Rates, alpha float64, pool string, log logr.Logger, now func() time.Time) *Learner {
	if now == nil {
		now = time.Now
	}
	return &Learner{base: base, alpha: alpha, pool: pool, log: log, now: now, eps: map[string]*learned{}, out: base.OutputTokens}
}

// Rates returns endpoint's current rates.
func (l *Learner) Rates(endpoint string) Rates {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := l.base
	r.OutputTokens = l.out
	r.SessionRequests = 1
	if l.sessions > 0 {
		r.SessionRequests = max(l.sessionReqs/l.sessions, 1)
	}
	prefillLog, stepLog := l.learnedScales.start()
	if e := l.eps[endpoint]; e != nil {
		if e.prefillSeen {
			prefillLog = e.prefillLog
		}
		if e.stepSeen {
			stepLog = e.stepLog
		}
	}
	r.PrefillTokensPerSec /= math.Exp(prefillLog)
	f := math.Exp(stepLog)
	r.StepOverhead, r.DecodePerSeq, r.DecodePerContextToken = r.StepOverhead*f, r.DecodePerSeq*f, r.DecodePerContextToken*f
	return r
}

// startFrom gives a first-observed endpoint the scales it was predicted with
// to learn from, and counts it in the pool.
func (l *Learner) startFrom(e *learned, prefill bool) {
	pm, sm := l.learnedScales.start()
	if prefill && !e.prefillSeen {
		e.prefillSeen, e.prefillLog = true, pm
		l.learnedScales.prefillN++
		l.learnedScales.prefill += pm
	}
	if !prefill && !e.stepSeen {
		e.stepSeen, e.stepLog = true, sm
		l.learnedScales.stepN++
		l.learnedScales.step += sm
	}
}

func (l *Learner) state(endpoint string) *learned {
	e := l.eps[endpoint]
	if e == nil {
		e = &learned{}
		l.eps[endpoint] = e
	}
	return e
}

// TTFT is one request's first-token observation with what the prediction
// assumed at dispatch, corrected by the engine's usage report.
type TTFT struct {
	// Observed and Predicted time to first token, in seconds.
	Observed, Predicted float64
	// QueuedTokens is the prefill ahead of it at dispatch.
	QueuedTokens int
	// PromptTokens and CachedTokens as the engine reported them.
	PromptTokens, CachedTokens int
	// StepSeconds is the non-prefill time the prediction included.
	StepSeconds float64
	// JoinedTokens is the uncached prompt tokens dispatched to the endpoint
	// after the request and before its first token.
	JoinedTokens int64
}

// ObserveTTFT moves endpoint's prefill rate toward what o implies.
func (l *Learner) ObserveTTFT(endpoint string, o TTFT) {
	if o.Observed <= 0 || o.PromptTokens <= 0 {
		return
	}
	telemetry.CostTTFTError.WithLabelValues(l.pool).Observe(o.Observed - o.Predicted)
	l.mu.Lock()
	defer l.mu.Unlock()
	e := l.state(endpoint)
	// Only a request whose steps ran no other prefill the picker knows of
	// teaches the rate. Prefill queued ahead is counted as whole prompts,
	// though some may be part done, which would make the engine look faster
	// than it is; prefill that arrived after it joins its last steps (the
	// engine fills their token budget in arrival order), which makes the
	// engine look slower. The Mooncake conversation trace, whose requests
	// often arrive in the same millisecond, taught one endpoint of eight a
	// rate 3x too slow from requests dispatched together, so long prompts
	// stopped going there and it served short ones alone: end-to-end p99
	// 40.4 s at twice the rate, 35.3 s without such observations.
	alone := o.QueuedTokens == 0 && o.JoinedTokens == 0
	if alone {
		l.startFrom(e, true)
	}
	rate := l.base.PrefillTokensPerSec / math.Exp(e.prefillLog)
	r := l.base
	work := float64(o.QueuedTokens) + r.PrefillWork(o.CachedTokens, o.PromptTokens-o.CachedTokens)
	predicted := work / rate
	observed := max(o.Observed-o.StepSeconds, predicted/4) // all step time: prefill was at least this fast
	out := outcome(o, predicted)
	telemetry.CostPrefillObservations.WithLabelValues(endpoint, out).Inc()
	if out == "learned" {
		old := e.prefillLog
		e.prefillLog = clamp(e.prefillLog+l.alpha*clamp(math.Log(observed/predicted), maxStepLog), maxScaleLog)
		l.learnedScales.prefill += e.prefillLog - old
	}
	if o.Predicted > 0 {
		e.errLog += l.alpha * (math.Abs(math.Log(o.Observed/o.Predicted)) - e.errLog)
	}
	e.n++
	telemetry.CostPrefillRate.WithLabelValues(endpoint).Set(l.base.PrefillTokensPerSec / math.Exp(e.prefillLog))
	l.warnIfOff(endpoint, e)
}

// outcome is what the prefill rate makes of o, whose own prefill was
// predicted to take predicted seconds (CostPrefillObservations).
func outcome(o TTFT, predicted float64) string {
	switch {
	case o.QueuedTokens > 0:
		return "queued"
	case o.JoinedTokens > 0:
		return "joined"
	case predicted <= 0:
		return "cached" // nothing to compute: no rate to learn
	}
	return "learned"
}

// warnIfOff logs, at most once a minute per endpoint, when predictions have
// been off by more than 2x on average.
func (l *Learner) warnIfOff(endpoint string, e *learned) {
	now := l.now()
	if e.n < warnAfter || e.errLog < math.Ln2 || now.Sub(e.warned) < warnEvery {
		return
	}
	e.warned = now
	l.log.Info("kv time cost: predicted TTFT stays off by more than 2x; check router.kvCost.rates or traffic bypassing the picker",
		"endpoint", endpoint, "meanErrorFactor", math.Exp(e.errLog), "observations", e.n)
}

// ObserveITL moves endpoint's step time toward an observed inter-token
// time, given the step time the configured (base) rates predict for the
// batch it ran in (both in seconds).
func (l *Learner) ObserveITL(endpoint string, observed, predicted float64) {
	if observed <= 0 || predicted <= 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	e := l.state(endpoint)
	l.startFrom(e, false)
	old := e.stepLog
	e.stepLog = clamp(e.stepLog+l.alpha*clamp(math.Log(observed/predicted)-e.stepLog, maxStepLog), maxScaleLog)
	l.learnedScales.step += e.stepLog - old
	telemetry.CostDecodeStep.WithLabelValues(endpoint).Set(math.Exp(e.stepLog))
}

// ObserveSession counts a request carrying a session id, and whether it
// opened the session. Counts decay by the learning rate per new session, so
// the mean follows changing traffic.
func (l *Learner) ObserveSession(opened bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if opened {
		keep := 1 - l.alpha/10 // a session spans several requests: decay slower than per-request rates
		l.sessions, l.sessionReqs = l.sessions*keep+1, l.sessionReqs*keep
	}
	l.sessionReqs++
}

// ObserveOutput learns the mean output length from a finished request.
func (l *Learner) ObserveOutput(tokens int) {
	if tokens <= 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.out += l.alpha * (float64(tokens) - l.out)
}

// Forget drops an endpoint's learned state (it left the pool).
func (l *Learner) Forget(endpoint string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if e := l.eps[endpoint]; e != nil {
		if e.prefillSeen {
			l.learnedScales.prefill -= e.prefillLog
			l.learnedScales.prefillN--
		}
		if e.stepSeen {
			l.learnedScales.step -= e.stepLog
			l.learnedScales.stepN--
		}
	}
	delete(l.eps, endpoint)
	telemetry.CostPrefillRate.DeleteLabelValues(endpoint)
	telemetry.CostPrefillObservations.DeletePartialMatch(prometheus.Labels{"endpoint": endpoint})
	telemetry.CostDecodeStep.DeleteLabelValues(endpoint)
}

func clamp(x, bound float64) float64 { return max(-bound, min(bound, x)) }

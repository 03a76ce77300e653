package costmodel

import (
	"math"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus/testutil"

	v1 "github.com/kvpick/kvpick/api/v1alpha1"
	"github.com/kvpick/kvpick/pkg/telemetry"
)

func base() Rates {
	c := v1.Default().Router.KVCost.Rates
	return FromConfig(c)
}

func TestDefaultsAndWork(t *testing.T) {
	r := base()
	if r.PrefillTokensPerSec != 15928 || r.StepOverhead != 0.01 || math.Abs(r.DecodePerContextToken-39e-9) > 1e-15 || r.OutputTokens != 128 {
		t.Fatalf("defaults %+v", r)
	}
	// 12k tokens cost 20 % more than 12k short-prompt tokens; a later chunk pays for what precedes it.
	if w := r.PrefillWork(0, 12000); math.Abs(w-14400) > 1e-9 {
		t.Fatalf("PrefillWork(0, 12000) = %v, want 14400", w)
	}
	if w := r.PrefillWork(6000, 1200); math.Abs(w-(1200+(7200.0*7200-6000*6000)/60000)) > 1e-9 {
		t.Fatalf("PrefillWork(6000, 1200) = %v", w)
	}
	if s := r.Step(10, 100000); math.Abs(s-(0.01+10*20e-6+100000*39e-9)) > 1e-12 {
		t.Fatalf("Step = %v", s)
	}
}

// engineTTFT is what an engine that prefills at rate would show for o.
func engineTTFT(rate float64, o TTFT) float64 {
	r := base()
	return (float64(o.QueuedTokens)+r.PrefillWork(o.CachedTokens, o.PromptTokens-o.CachedTokens))/rate + o.StepSeconds
}

// TestLearnsEachEndpointsPrefillRate: one endpoint prefills at half the
// configured rate, one at the configured rate; each converges to its own.
func TestLearnsEachEndpointsPrefillRate(t *testing.T) {
	l := NewLearner(base(), 0.05, "t", logr.Discard(), nil)
	for i := range 300 {
		o := TTFT{QueuedTokens: 1000 * (i % 5), PromptTokens: 8000, CachedTokens: 2000 * (i % 3), StepSeconds: 0.012}
		slow, fast := o, o
		slow.Observed, fast.Observed = engineTTFT(15928/2, o), engineTTFT(15928, o)
		l.ObserveTTFT("slow", slow)
		l.ObserveTTFT("fast", fast)
	}
	if got := l.Rates("slow").PrefillTokensPerSec; math.Abs(got-15928/2) > 0.05*15928/2 {
		t.Errorf("slow endpoint learned %.0f tokens/s, want ~%d", got, 15928/2)
	}
	if got := l.Rates("fast").PrefillTokensPerSec; math.Abs(got-15928) > 0.02*15928 {
		t.Errorf("fast endpoint learned %.0f tokens/s, want ~15928", got)
	}
	// An endpoint not yet observed starts optimistic: here the pool is slower
	// than the profile, so at the configured rate (a fast newcomer gets tried).
	if got := l.Rates("unseen").PrefillTokensPerSec; got != 15928 {
		t.Errorf("unseen endpoint %.0f, want the configured rate while the pool is slower", got)
	}
}

// TestUnseenEndpointStartsFromAFasterPool: when every endpoint has learned
// that it is faster than the profile, an unobserved twin starts at the pool's
// mean (not the slower profile), so it is not shunned; when they leave, the
// profile stands again.
func TestUnseenEndpointStartsFromAFasterPool(t *testing.T) {
	l := NewLearner(base(), 0.05, "t", logr.Discard(), nil)
	for range 300 {
		o := TTFT{PromptTokens: 8000, StepSeconds: 0.012}
		a, b := o, o
		a.Observed, b.Observed = engineTTFT(2*15928, o), engineTTFT(3*15928, o)
		l.ObserveTTFT("a", a)
		l.ObserveTTFT("b", b)
	}
	want := math.Sqrt(l.Rates("a").PrefillTokensPerSec * l.Rates("b").PrefillTokensPerSec)
	if got := l.Rates("unseen").PrefillTokensPerSec; math.Abs(got-want) > 1e-6*want || got < 1.5*15928 {
		t.Errorf("unseen endpoint %.0f, want the pool's geometric mean %.0f", got, want)
	}
	l.Forget("a")
	l.Forget("b")
	if got := l.Rates("unseen").PrefillTokensPerSec; math.Abs(got-15928) > 1e-6 {
		t.Errorf("with nothing learned, unseen %.2f, want the configured rate", got)
	}
}

// TestOutlierMovesBoundedStep: one TTFT 100x the prediction (a request
// stuck behind traffic the picker never saw) moves the rate by at most
// 2^alpha; the rate never leaves 8x of the configured one.
func TestOutlierMovesBoundedStep(t *testing.T) {
	l := NewLearner(base(), 0.05, "t", logr.Discard(), nil)
	o := TTFT{PromptTokens: 8000, StepSeconds: 0.01}
	o.Observed = 100 * engineTTFT(15928, o)
	l.ObserveTTFT("e", o)
	if got, floor := l.Rates("e").PrefillTokensPerSec, 15928/math.Pow(2, 0.05); got < floor-1e-6 {
		t.Fatalf("after one outlier %.0f tokens/s, want >= %.0f", got, floor)
	}
	for range 2000 {
		l.ObserveTTFT("e", o)
	}
	if got := l.Rates("e").PrefillTokensPerSec; got < 15928/8-1 {
		t.Fatalf("after many outliers %.0f tokens/s, want >= %d", got, 15928/8)
	}
}

func TestLearnsStepTimeAndOutput(t *testing.T) {
	l := NewLearner(base(), 0.1, "t", logr.Discard(), func() time.Time { return time.Unix(0, 0) })
	for range 200 {
		l.ObserveITL("e", 0.03, 0.02) // steps take 1.5x what the configured rates say
		l.ObserveOutput(400)
	}
	r := l.Rates("e")
	if math.Abs(r.StepOverhead-0.015) > 0.0005 || math.Abs(r.OutputTokens-400) > 1 {
		t.Fatalf("step overhead %v (want 0.015), output %v (want 400)", r.StepOverhead, r.OutputTokens)
	}
}

func TestLearnsRequestsPerSession(t *testing.T) {
	l := NewLearner(base(), 0.05, "t", logr.Discard(), nil)
	if got := l.Rates("e").SessionRequests; got != 1 {
		t.Fatalf("before any session: %v, want 1", got)
	}
	for range 100 {
		l.ObserveSession(true)
		for range 4 {
			l.ObserveSession(false)
		}
	}
	if got := l.Rates("e").SessionRequests; math.Abs(got-5) > 0.1 {
		t.Fatalf("5-request sessions learned as %v", got)
	}
}

// TestQueuedObservationsDoNotTeachTheRate: with prefill queued ahead the
// picker's count includes work already part done, so only requests with
// nothing ahead move the rate (the error metric still sees every request).
func TestQueuedObservationsDoNotTeachTheRate(t *testing.T) {
	l := NewLearner(base(), 0.5, "t", logr.Discard(), nil)
	o := TTFT{QueuedTokens: 50000, PromptTokens: 8000, StepSeconds: 0.01}
	o.Observed = 0.2 // far faster than 58,000 tokens at 15,928/s: the queue was mostly done
	for range 20 {
		l.ObserveTTFT("e", o)
	}
	if got := l.Rates("e").PrefillTokensPerSec; got != 15928 {
		t.Fatalf("queued observations moved the rate to %.0f", got)
	}
}

// TestJoinedObservationsDoNotTeachTheRate: prefill dispatched after a
// request and before its first token may have shared its steps, so its time
// says nothing about the request's own prefill; a request alone does teach.
// The observations counter says which it was, per endpoint.
func TestJoinedObservationsDoNotTeachTheRate(t *testing.T) {
	for _, tc := range []struct {
		name    string
		queued  int
		joined  int64
		cached  int
		moves   bool
		outcome string
	}{
		{"alone", 0, 0, 0, true, "learned"},
		{"joined by one token", 0, 1, 0, false, "joined"},
		{"joined by a long prompt", 0, 12000, 0, false, "joined"},
		{"queued and joined", 3000, 500, 0, false, "queued"},
		{"all cached", 0, 0, 1000, false, "cached"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ep := "e-" + tc.name
			series := func() int {
				return testutil.CollectAndCount(telemetry.CostPrefillObservations, "kvpick_costmodel_prefill_observations_total")
			}
			before := series()
			l := NewLearner(base(), 0.5, "t", logr.Discard(), nil)
			// three times the configured time: a short prompt whose step also ran another's prefill
			o := TTFT{PromptTokens: 1000, CachedTokens: tc.cached, StepSeconds: 0.01, QueuedTokens: tc.queued, JoinedTokens: tc.joined}
			r := base()
			o.Observed = 0.01 + 3*r.PrefillWork(0, o.PromptTokens+o.QueuedTokens)/15928
			for range 20 {
				l.ObserveTTFT(ep, o)
			}
			got := l.Rates(ep).PrefillTokensPerSec
			if moved := got < 0.9*15928; moved != tc.moves {
				t.Fatalf("rate %.0f tokens/s after 20 observations; want moved=%v", got, tc.moves)
			}
			if n := testutil.ToFloat64(telemetry.CostPrefillObservations.WithLabelValues(ep, tc.outcome)); n != 20 {
				t.Fatalf("%s observations counted %v, want 20", tc.outcome, n)
			}
			if n := series(); n != before+1 {
				t.Fatalf("%d observation series, want %d: one outcome for this endpoint", n, before+1)
			}
			l.Forget(ep)
			if n := series(); n != before {
				t.Fatalf("%d observation series after the endpoint was forgotten, want %d", n, before)
			}
		})
	}
}

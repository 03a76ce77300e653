package router

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"

	v1 "github.com/kvpick/kvpick/api/v1alpha1"
	"github.com/kvpick/kvpick/pkg/request"
	"github.com/kvpick/kvpick/pkg/scheduler"
)

// TestLifecycleTeachesRates: an endpoint whose first tokens come four times
// later than the configured prefill rate predicts ends up with a lower
// learned rate and a prediction closer to what it shows; the other endpoint
// keeps the configured rate. Usage's cached count, not the picker's guess,
// is what the rate is judged against.
func TestLifecycleTeachesRates(t *testing.T) {
	// The popular-prefix rule off: every prompt here extends the last, and
	// its copies would take most requests off the slow endpoint before it
	// has taught its rate (10 of 200 instead of 30); this test is about the
	// learner.
	f := newFixture(t, 2, func(cfg *v1.Config) { cfg.Router.KVCost.PopularShare = new(float64) })
	const prompt = 8000 // tokens of prompt the engine reports, none cached
	slow := ""
	for i := range 200 {
		d := f.decide(t, words("q", 1000+i))
		ep := d.Endpoints()[0]
		if slow == "" {
			slow = ep
		}
		took := 0.02 + float64(prompt)/15928 // what the configured rates say, plus a step
		if ep == slow {
			took = 0.02 + 4*float64(prompt)/15928
		}
		f.advance(time.Duration(took * float64(time.Second)))
		d.FirstToken()
		d.Usage(request.Usage{PromptTokens: prompt, CompletionTokens: 50})
		d.Done(nil)
	}
	rs, rf := f.r.Learner().Rates(slow), 0.0
	for _, e := range f.set.Snapshot().List {
		if e.Key() != slow {
			rf = f.r.Learner().Rates(e.Key()).PrefillTokensPerSec
		}
	}
	// work per request is 8000*(1+8000/60000) token equivalents; the slow one took 4x the flat time.
	if rs.PrefillTokensPerSec > 0.5*15928 || rs.PrefillTokensPerSec < 15928/8 {
		t.Errorf("slow endpoint learned %.0f tokens/s, want well under the configured 15,928 (bounded at 1/8)", rs.PrefillTokensPerSec)
	}
	if rf != 0 && math.Abs(rf-15928)/15928 > 0.5 {
		t.Errorf("fast endpoint learned %.0f tokens/s, want near 15,928", rf)
	}
	if rs.OutputTokens > 60 {
		t.Errorf("output length learned %.0f, want near 50", rs.OutputTokens)
	}
}

// TestUntimedFirstTokenTeachesNoPrefillRate: a response that is not streamed
// shows its first token only at its end; that time is the whole generation,
// and learning from it would take the prefill rate down with every decode
// step (a soak run, a third of its requests unstreamed, learned 7,800-10,000
// tokens/s for engines running 12,000). The output length still counts.
func TestUntimedFirstTokenTeachesNoPrefillRate(t *testing.T) {
	f := newFixture(t, 2, nil)
	const prompt = 8000
	for i := range 200 {
		d := f.decide(t, words("q", 1000+i))
		took := 0.02 + 4*float64(prompt)/15928 // four times the prefill time
		f.advance(time.Duration(took * float64(time.Second)))
		d.FirstTokenAtEnd()
		d.Usage(request.Usage{PromptTokens: prompt, CompletionTokens: 50})
		d.Done(nil)
	}
	for _, e := range f.set.Snapshot().List {
		r := f.r.Learner().Rates(e.Key())
		if r.PrefillTokensPerSec != 0 && r.PrefillTokensPerSec != 15928 {
			t.Errorf("%s learned a prefill rate of %.0f tokens/s from untimed first tokens", e.Key(), r.PrefillTokensPerSec)
		}
		if r.OutputTokens > 60 {
			t.Errorf("%s: output length learned %.0f, want near 50", e.Key(), r.OutputTokens)
		}
	}
}

// TestDecisionLogShowsTheView: the V(2) decision line carries what this
// replica's view predicted on the primary, so two replicas' decisions can be
// compared: the prefill it counted ahead and the predicted time to first token.
func TestDecisionLogShowsTheView(t *testing.T) {
	f := newFixture(t, 2, nil)
	for i := range 2 {
		d := f.decide(t, words("q", 2000+i))
		var line string
		log := funcr.New(func(_, args string) { line = args }, funcr.Options{Verbosity: 2})
		logDecision(log, d, &scheduler.Result{})
		for _, want := range []string{`"queuedTokens"=`, `"running"=`} {
			if !strings.Contains(line, want) {
				t.Fatalf("decision line %s lacks %s", line, want)
			}
		}
		m := regexp.MustCompile(`"predictedTTFTSeconds"=([0-9.e+-]+)`).FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("decision line %s lacks the predicted TTFT", line)
		}
		if v, err := strconv.ParseFloat(m[1], 64); err != nil || v <= 0 {
			t.Fatalf("decision line %s predicts %q for a 2,000-word prompt", line, m[1])
		}
	}
}

// decide prepares and decides a request for prompt, failing the test on error.
func (f *fixture) decide(t *testing.T, prompt string) *Decision {
	t.Helper()
	p, err := f.r.Prepare(context.Background(), input(prompt, nil))
	if err != nil {
		t.Fatal(err)
	}
	d, err := f.r.Decide(p)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestRequestsDispatchedTogetherTeachNoPrefillRate: requests sent to one
// endpoint in the same instant share their engine steps, so the first one's
// first token waits out the others' prefill too. Learning from it taught
// an endpoint of routebench's conversation trace a rate 3x too slow; the
// lifecycle must pass on what joined, and such a request teaches nothing.
// The last of each group, alone from then on, still teaches.
func TestRequestsDispatchedTogetherTeachNoPrefillRate(t *testing.T) {
	f := newFixture(t, 1, nil)
	const prompt = 2000
	step := func(n float64) time.Duration { // the engine computing n prompts' worth in one go
		return time.Duration((0.02 + n*prompt/15928) * float64(time.Second))
	}
	for i := range 100 {
		a := f.decide(t, words("a", 1000+i))
		b := f.decide(t, words("b", 1000+i))
		f.advance(step(2)) // both first tokens after both prefills
		a.FirstToken()
		b.FirstToken()
		for _, d := range []*Decision{a, b} {
			d.Usage(request.Usage{PromptTokens: prompt, CompletionTokens: 50})
			d.Done(nil)
		}
	}
	ep := f.set.Snapshot().List[0].Key()
	if got := f.r.Learner().Rates(ep).PrefillTokensPerSec; got < 0.8*15928 {
		t.Fatalf("learned %.0f tokens/s from requests whose steps ran another's prefill, want near 15,928", got)
	}
	for i := range 100 { // now alone, at half the configured rate
		d := f.decide(t, words("c", 1000+i))
		f.advance(step(2))
		d.FirstToken()
		d.Usage(request.Usage{PromptTokens: prompt, CompletionTokens: 50})
		d.Done(nil)
	}
	if got := f.r.Learner().Rates(ep).PrefillTokensPerSec; got > 0.75*15928 {
		t.Fatalf("learned %.0f tokens/s from requests alone at half the rate, want well under 15,928", got)
	}
}

// TestInterTokenTimesTeachAgainstTheBatchNow: a request's inter-token times
// are judged against the batch running when they come, not the one it
// joined. Eight long requests start together, seven finish, and the last
// streams at exactly the configured step time of a batch of one: the
// learned step scale stays at 1, where judged against the batch at its
// dispatch (eight requests, their contexts) it fell to 0.74.
func TestInterTokenTimesTeachAgainstTheBatchNow(t *testing.T) {
	f := newFixture(t, 1, nil)
	var ds []*Decision
	for i := range 8 {
		d := f.decide(t, words(fmt.Sprintf("p%d-", i), 8000))
		d.Commit()
		d.FirstToken()
		ds = append(ds, d)
	}
	for _, d := range ds[:7] {
		d.Done(nil)
	}
	last, ep := ds[7], ds[7].Endpoints()[0]
	base := f.r.rates.model.Base
	for n := itlWindow; n <= 40*itlWindow; n += itlWindow {
		c := f.active.Counts(ep)
		f.advance(time.Duration(itlWindow * base.Step(c.Requests, c.ContextTokens) * float64(time.Second)))
		last.Progress(n)
	}
	last.Done(nil)
	scale := f.r.Learner().Rates(ep).StepOverhead / base.StepOverhead
	if math.Abs(scale-1) > 0.03 {
		t.Fatalf("learned step scale %.3f from steps at exactly the configured rates, want 1", scale)
	}
}

package fleetsim

import (
	"reflect"
	"testing"
	"time"

	"github.com/kvpick/kvpick/pkg/admission"
	"github.com/kvpick/kvpick/pkg/engine"
	"github.com/kvpick/kvpick/pkg/kvevents"
	"github.com/kvpick/kvpick/pkg/request"
	"github.com/kvpick/kvpick/pkg/workload"
)

// cycle is a test policy: plain round-robin with its own lifecycle checks,
// optionally with a queue that admits while fewer than limit requests are
// in flight on the fleet.
type cycle struct {
	keys     []string
	next     int
	inFlight int
	limit    int // 0: no queue
	t        *testing.T
	events   int
}

type cyclePending struct{ n int }

func (p cyclePending) PromptTokens() int { return p.n }
func (cyclePending) Priority() int       { return 0 }

func cycleSpec(t *testing.T, limit int, out **cycle) Spec {
	return Spec{Name: "cycle", Build: func(env Env) (Policy, error) {
		c := &cycle{limit: limit, t: t}
		for _, e := range env.Set.Snapshot().List {
			c.keys = append(c.keys, e.Key())
		}
		if out != nil {
			*out = c
		}
		return c, nil
	}}
}

func (c *cycle) Prepare(a *Arrival) (Pending, error) { return cyclePending{len(a.Tokens)}, nil }
func (c *cycle) Admission() *admission.Options {
	if c.limit == 0 {
		return nil
	}
	return &admission.Options{MaxLength: 1 << 20, MaxWait: time.Hour}
}
func (c *cycle) Admissible(Pending) bool { return c.limit == 0 || c.inFlight < c.limit }
func (c *cycle) Dispatch(Pending) (Ticket, error) {
	k := c.keys[c.next%len(c.keys)]
	c.next++
	c.inFlight++
	return &cycleTicket{c: c, key: k}, nil
}
func (c *cycle) WantsEvents() bool                   { return true }
func (c *cycle) HandleEvents(string, kvevents.Batch) { c.events++ }
func (c *cycle) Tick(time.Time)                      {}

type cycleTicket struct {
	c        *cycle
	key      string
	first    bool
	progress int
	usage    bool
	done     bool
}

func (t *cycleTicket) Endpoint() string { return t.key }
func (t *cycleTicket) FirstToken() {
	if t.first || t.done {
		t.c.t.Errorf("FirstToken twice or after Done")
	}
	t.first = true
}
func (t *cycleTicket) Progress(n int) {
	if !t.first || n <= t.progress {
		t.c.t.Errorf("Progress(%d) before first token or not increasing (was %d)", n, t.progress)
	}
	t.progress = n
}
func (t *cycleTicket) Usage(request.Usage) { t.usage = true }
func (t *cycleTicket) Done(error) {
	if t.done || !t.usage {
		t.c.t.Errorf("Done twice or without usage")
	}
	t.done = true
	t.c.inFlight--
}

// small is a fleet whose engines are slow enough to queue at modest load.
func small(n int) Config {
	ec := engine.DefaultConfig()
	ec.PrefillTokensPerSec = 20000
	ec.NumGPUBlocks = 2000
	ec.MaxNumSeqs = 16
	return Config{Engines: Fleet(n, ec)}
}

func sharedWorkload(t *testing.T, n int, rate float64) *workload.Workload {
	t.Helper()
	reqs, err := workload.SharedPrefix{Requests: n, Prefixes: 4, PrefixLen: 2000, SuffixLen: 100, Share: 0.9,
		UnsharedLen: 3000, Output: 20, Arrivals: workload.Arrivals{Rate: rate}}.Generate(11)
	if err != nil {
		t.Fatal(err)
	}
	w := workload.Merge("test", reqs)
	return &w
}

func TestInvariants(t *testing.T) {
	w := sharedWorkload(t, 300, 30)
	for _, limit := range []int{0, 3} {
		var c *cycle
		res, err := Run(small(3), w, cycleSpec(t, limit, &c))
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Violations) > 0 {
			t.Fatalf("limit %d: violations %v", limit, res.Violations)
		}
		s := res.Summary
		if s.Completed != 300 || s.Rejected != 0 {
			t.Fatalf("limit %d: completed %d rejected %d, want 300 and 0", limit, s.Completed, s.Rejected)
		}
		if c.inFlight != 0 || c.events == 0 {
			t.Errorf("limit %d: %d left in flight, %d event batches", limit, c.inFlight, c.events)
		}
		for _, r := range res.Records {
			if !(r.Arrival <= r.Dispatch && r.Dispatch < r.First && r.First <= r.Finish) || r.Generated != r.Output {
				t.Fatalf("limit %d: request %d out of order or short: %+v", limit, r.ID, r)
			}
		}
		if limit > 0 && s.MaxQueue == 0 {
			t.Errorf("limit %d: the queue never held a request", limit)
		}
		for i := 1; i < len(res.Series); i++ {
			if res.Series[i].At <= res.Series[i-1].At {
				t.Fatal("series time not increasing")
			}
		}
	}
}

func TestQueueTimeoutRejects(t *testing.T) {
	w := sharedWorkload(t, 60, 200)
	spec := cycleSpec(t, 1, nil)
	build := spec.Build
	spec.Build = func(env Env) (Policy, error) {
		p, err := build(env)
		return &shortWait{p}, err
	}
	res, err := Run(small(1), w, spec)
	if err != nil {
		t.Fatal(err)
	}
	if res.Summary.RejectedBy["queue_timeout"] == 0 || res.Summary.Completed+res.Summary.Rejected != 60 || len(res.Violations) > 0 {
		t.Errorf("summary %+v violations %v: want queue timeouts and every request accounted once", res.Summary, res.Violations)
	}
}

type shortWait struct{ Policy }

func (shortWait) Admission() *admission.Options {
	return &admission.Options{MaxLength: 1000, MaxWait: 200 * time.Millisecond}
}

func TestDeterministic(t *testing.T) {
	w := sharedWorkload(t, 200, 40)
	spec := SGLangCacheAware("sglang", SGLangOptions{})
	a, err := Run(small(3), w, spec)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Run(small(3), w, spec)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a.Records, b.Records) || !reflect.DeepEqual(a.Summary, b.Summary) {
		t.Error("two runs with the same seed differ")
	}
}

func TestSGLangKeepsPrefixesTogether(t *testing.T) {
	w := sharedWorkload(t, 300, 20)
	sg, err := Run(small(4), w, SGLangCacheAware("sglang", SGLangOptions{}))
	if err != nil {
		t.Fatal(err)
	}
	rr, err := Run(small(4), w, cycleSpec(t, 0, nil))
	if err != nil {
		t.Fatal(err)
	}
	if sg.Summary.PrefixHit <= rr.Summary.PrefixHit {
		t.Errorf("sglang prefix hit %.3f <= round-robin %.3f", sg.Summary.PrefixHit, rr.Summary.PrefixHit)
	}
}

func TestHeapOrder(t *testing.T) {
	var h eventHeap
	for _, at := range []time.Duration{5, 1, 4, 1, 3, 2, 9, 0} {
		h.push(event{at: at, kind: evArrival})
	}
	h.push(event{at: 1, kind: evStepEnd})
	prev := event{at: -1}
	for h.Len() > 0 {
		e := h.pop()
		if e.before(&prev) {
			t.Fatalf("popped %+v after %+v", e, prev)
		}
		prev = e
	}
}

func TestCheckStepCatchesBrokenLimits(t *testing.T) {
	ec := engine.DefaultConfig()
	ec.MaxNumSeqs, ec.MaxNumBatchedTokens = 4, 100
	eng, err := engine.New(ec, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := &sim{}
	n := &node{s: s, key: "x", eng: eng}
	n.checkStep(&engine.StepResult{Scheduled: 4, PrefillTokens: 90, DecodeSeqs: 10})
	if s.check.n != 0 {
		t.Fatalf("a step within limits flagged: %v", s.check.errors)
	}
	n.checkStep(&engine.StepResult{Scheduled: 5, PrefillTokens: 95, DecodeSeqs: 6})
	if s.check.n != 2 {
		t.Errorf("want 2 violations (sequences, tokens), got %v", s.check.errors)
	}
}

// shortsPass admits a prompt under 100 tokens at any time and a longer one
// only while nothing is in flight: a queue of long prompts that cannot go
// and short arrivals that can.
type shortsPass struct{ *cycle }

func (s shortsPass) Admissible(p Pending) bool {
	return p.PromptTokens() < 100 || s.inFlight == 0
}

// An arrival that can go goes at once although requests queued before it
// cannot (no head of line), as in the real queue; it does not wait for the
// next capacity change.
func TestArrivalPassesAQueueThatCannotGo(t *testing.T) {
	req := func(id int, at time.Duration, n int) workload.Request {
		return workload.Request{ID: id, Arrival: at, Segments: []workload.Segment{{ID: uint64(id + 1), Len: n}}, Output: 50}
	}
	w := workload.Merge("arrival", []workload.Request{
		req(0, 0, 4000),                // in flight: the long prompts after it wait
		req(1, time.Millisecond, 4000), // queued
		req(2, 2*time.Millisecond, 50), // can go
	})
	spec := cycleSpec(t, 1, nil)
	build := spec.Build
	spec.Build = func(env Env) (Policy, error) {
		p, err := build(env)
		return shortsPass{p.(*cycle)}, err
	}
	res, err := Run(small(2), &w, spec)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Violations) > 0 {
		t.Fatalf("violations: %v", res.Violations)
	}
	long, short := res.Records[1], res.Records[2]
	if !long.Queued || long.Dispatch <= short.Dispatch {
		t.Errorf("long prompt: queued %v, dispatched at %v; want queued and after the short one (%v)", long.Queued, long.Dispatch, short.Dispatch)
	}
	if short.Dispatch != short.Arrival {
		t.Errorf("short prompt dispatched at %v, arrived at %v: it waited behind a request that could not go", short.Dispatch, short.Arrival)
	}
}

package scheduler

import (
	"math"
	"testing"
	"time"

	v1 "github.com/kvpick/kvpick/api/v1alpha1"
	"github.com/kvpick/kvpick/pkg/activework"
	"github.com/kvpick/kvpick/pkg/costmodel"
)

// TestPredictHandChecked: 1,000 tokens/s, 10ms steps plus 1ms per running
// request, no context or attention cost. 500 tokens queued, a 1,000-token
// prompt with 400 cached, 2 running: one step of 12ms, 1,100 tokens of
// prefill, so 1.112 s to the first token.
func TestPredictHandChecked(t *testing.T) {
	tc := TimeCost{Base: costmodel.Rates{PrefillTokensPerSec: 1000, StepOverhead: 0.01, DecodePerSeq: 0.001, OutputTokens: 100}, DecodeWeight: 1}
	c := fleet(t, cand{cached: 25, active: activework.Counts{PrefillTokens: 500, Requests: 2}})[0]
	p := tc.Predict(&Request{PromptTokens: 1000, Blocks: 62, BlockSize: 16}, &c)
	if p.Steps != 1 || math.Abs(p.TTFT-1.112) > 1e-9 {
		t.Fatalf("steps %d TTFT %v, want 1 and 1.112", p.Steps, p.TTFT)
	}
	// Decode: 100 tokens x (2 running x 1ms it adds to each + 2 x 1ms they add to it) = 0.4 s, plus the
	// stall of its own 0.6 s of prefill on each of the 2 running requests, 1.2 s.
	if math.Abs(p.Stall-1.2) > 1e-9 || math.Abs(p.Decode-1.6) > 1e-9 {
		t.Fatalf("decode %v with stall %v, want 1.6 and 1.2", p.Decode, p.Stall)
	}
	// A learned rate replaces the base one.
	c.Rates = tc.Base
	c.Rates.PrefillTokensPerSec = 500
	if p2 := tc.Predict(&Request{PromptTokens: 1000, Blocks: 62, BlockSize: 16}, &c); math.Abs(p2.TTFT-2.212) > 1e-9 {
		t.Fatalf("with learned rate TTFT %v, want 2.212", p2.TTFT)
	}
}

// TestTimeCostKeepsAffinityWhereBlocksSpread is the case: A holds
// 6,000 of a 7,200-token prompt and runs 10 requests holding 2,000 blocks;
// B is idle. The blocks formula (1,200/16 + 2,000 + 75 against 450 + 450)
// sends the request to B to prefill all of it; the time model keeps it on A
// (0.18 s against 0.52 s).
func TestTimeCostKeepsAffinityWhereBlocksSpread(t *testing.T) {
	specs := []cand{{cached: 375, total: 19000, active: activework.Counts{DecodeBlocks: 2000, Requests: 10, ContextTokens: 72000}}, {total: 19000}}
	r := Request{PromptTokens: 7200, Blocks: 450, BlockSize: 16}
	for _, tc := range []struct {
		model string
		want  string
	}{{v1.CostModelBlocks, "10.0.0.2:8000"}, {v1.CostModelTime, "10.0.0.1:8000"}} {
		s := mustNew(t, router(v1.ModeKV, func(c *v1.Router) { c.KVCost.Model = tc.model }))
		got, _, err := s.Schedule(&r, fleet(t, specs...))
		if err != nil || got[0].Key() != tc.want {
			t.Errorf("model %s: chose %v (err %v), want %s", tc.model, keys(got), err, tc.want)
		}
	}
}

// TestBalanceBound: A is cheap to decode on but has 40,000 prefill tokens
// queued (TTFT ~2.6 s); B runs 60 requests (a large decode term) but
// answers in ~0.5 s. With decode weighted fully A wins on cost; a 1 s bound
// on TTFT over the best rules it out, in either cost model.
func TestBalanceBound(t *testing.T) {
	specs := []cand{{total: 19000, active: activework.Counts{PrefillTokens: 40000}},
		{total: 19000, active: activework.Counts{Requests: 60, DecodeBlocks: 150, ContextTokens: 600000}}}
	r := Request{PromptTokens: 7200, Blocks: 450, BlockSize: 16}
	for _, tc := range []struct {
		name  string
		model string
		bound time.Duration
		want  string
	}{
		{"time, no bound", v1.CostModelTime, 0, "10.0.0.1:8000"},
		{"time, 1s bound", v1.CostModelTime, time.Second, "10.0.0.2:8000"},
		{"blocks, 1s bound", v1.CostModelBlocks, time.Second, "10.0.0.2:8000"},
	} {
		s := mustNew(t, router(v1.ModeKV, func(c *v1.Router) {
			w := 1.0
			c.KVCost.Model, c.KVCost.DecodeWeight, c.KVCost.BalanceBound = tc.model, &w, &v1.Duration{Duration: tc.bound}
		}))
		got, _, err := s.Schedule(&r, fleet(t, specs...))
		if err != nil || got[0].Key() != tc.want {
			t.Errorf("%s: chose %v (err %v), want %s", tc.name, keys(got), err, tc.want)
		}
	}
}

// TestNewSessionCarriesItsFollowers: a session's first request weighs the
// decode of the requests that will follow it to the same endpoint; the stall
// of its own prefill it weighs once (their prefills are theirs).
func TestNewSessionCarriesItsFollowers(t *testing.T) {
	for _, load := range []bool{true, false} {
		tc := TimeCost{Base: costmodel.Rates{PrefillTokensPerSec: 1000, StepOverhead: 0.01, DecodePerSeq: 0.001, OutputTokens: 100, SessionRequests: 5},
			DecodeWeight: 1, SessionLoad: load}
		c := fleet(t, cand{active: activework.Counts{Requests: 2}})[0]
		r := Request{PromptTokens: 100, BlockSize: 16}
		one := tc.Predict(&r, &c)
		r.NewSession = true
		first := tc.Predict(&r, &c)
		times := 1.0 // sessionLoad off: a first request is priced like any other
		if load {
			times = 5
		}
		if got, want := first.Decode-first.Stall, times*(one.Decode-one.Stall); math.Abs(got-want) > 1e-12 || want <= 0 {
			t.Fatalf("sessionLoad %v: new session decode %v, want %v x %v", load, got, times, one.Decode-one.Stall)
		}
		if first.Stall != one.Stall || one.Stall != 0.2 { // 2 running x 0.1 s of prefill
			t.Fatalf("sessionLoad %v: stall %v for a new session, %v otherwise; want 0.2 both", load, first.Stall, one.Stall)
		}
	}
}

// TestPrefillStallsTheBatch: a 12,000-token prompt nobody holds, A running
// 20 short requests, B 6 with 40,000 tokens of context each. By TTFT and
// per-token decode costs A is the cheaper (its steps are shorter), but the
// prompt's 0.9 s of prefill stalls each request of the batch it joins: 20
// stalls on A against 6 on B, so it goes to B.
func TestPrefillStallsTheBatch(t *testing.T) {
	specs := []cand{{total: 100000, active: activework.Counts{Requests: 20, ContextTokens: 4000}},
		{total: 100000, active: activework.Counts{Requests: 6, ContextTokens: 240000}}}
	r := Request{PromptTokens: 12000, Blocks: 750, BlockSize: 16}
	s := mustNew(t, router(v1.ModeKV))
	cands := fleet(t, specs...)
	got, _, err := s.Schedule(&r, cands)
	if err != nil || got[0].Key() != "10.0.0.2:8000" {
		t.Fatalf("chose %v (err %v), want B", keys(got), err)
	}
	tc := kvCostFor(router(v1.ModeKV).KVCost).(costScorer).t
	var without [2]float64
	for i := range cands {
		p := tc.Predict(&r, &cands[i])
		if want := float64(cands[i].Active.Requests) * p.Own; math.Abs(p.Stall-want) > 1e-9 || p.Own < 0.8 {
			t.Fatalf("%s: stall %v, want %v (running x own prefill %v)", cands[i].Key(), p.Stall, want, p.Own)
		}
		without[i] = tc.Cost(&r, &cands[i], 0) - tc.DecodeWeight*p.Stall
	}
	if without[0] >= without[1] {
		t.Fatalf("costs without the stall %v: the case no longer tests it (A should be cheaper)", without)
	}
}

// TestNewSessionCountsOwnPrefillOnce: PrefillWeight adds a request's own
// prefill time again, except for a session's first request.
func TestNewSessionCountsOwnPrefillOnce(t *testing.T) {
	tc := TimeCost{Base: costmodel.Rates{PrefillTokensPerSec: 1000, StepOverhead: 0.01, DecodePerSeq: 0.001, OutputTokens: 100, SessionRequests: 3},
		DecodeWeight: 0.5, PrefillWeight: 1}
	c := fleet(t, cand{cached: 25, active: activework.Counts{PrefillTokens: 500, Requests: 2}})[0]
	for _, newSession := range []bool{false, true} {
		r := Request{PromptTokens: 1000, Blocks: 62, BlockSize: 16, NewSession: newSession}
		p := tc.Predict(&r, &c)
		want := p.TTFT + 0.5*p.Decode
		if !newSession {
			want += p.Own
		}
		if got := tc.Cost(&r, &c, 0); p.Own <= 0 || math.Abs(got-want) > 1e-12 {
			t.Errorf("new session %v: cost %v, want %v (own prefill %v)", newSession, got, want, p.Own)
		}
	}
}

// TestTemperatureWorksWithEitherModel: softmax over normalised costs is
// unit-free, so the same temperature spreads choices in seconds as in blocks
// while still preferring the cheaper endpoint.
func TestTemperatureWorksWithEitherModel(t *testing.T) {
	specs := []cand{{cached: 300, total: 19000}, {total: 19000}}
	r := Request{PromptTokens: 7200, Blocks: 450, BlockSize: 16}
	for _, model := range []string{v1.CostModelTime, v1.CostModelBlocks} {
		s := mustNew(t, router(v1.ModeKV, func(c *v1.Router) { temp := 0.5; c.KVCost.Model, c.KVCost.Temperature = model, &temp }))
		n := map[string]int{}
		for range 400 {
			got, _, _ := s.Schedule(&r, fleet(t, specs...))
			n[got[0].Key()]++
		}
		if n["10.0.0.1:8000"] <= n["10.0.0.2:8000"] || n["10.0.0.2:8000"] == 0 {
			t.Errorf("%s: choices %v, want both, the cached endpoint more often", model, n)
		}
	}
}

// TestNewSessionCountsPinnedSessions: two idle endpoints, one with 3
// running requests' worth of pinned sessions (between turns, running
// nothing now). A new session's decode batch there holds those 3 (at the
// request's own prompt each, as nothing runs), so it costs more and the
// session goes to the other endpoint; a request of an existing session is
// not affected.
func TestNewSessionCountsPinnedSessions(t *testing.T) {
	tc := TimeCost{Base: costmodel.Rates{PrefillTokensPerSec: 1000, StepOverhead: 0.01, DecodePerSeq: 0.001,
		DecodePerContextToken: 1e-6, OutputTokens: 100, SessionRequests: 1}, DecodeWeight: 1, SessionLoad: true}
	cs := fleet(t, cand{}, cand{})
	cs[0].SessionRunning = 3
	r := &Request{PromptTokens: 1000, Blocks: 62, BlockSize: 16, NewSession: true}
	p := tc.Predict(r, &cs[0])
	if p.Running != 3 || p.ContextTokens != 3000 {
		t.Fatalf("batch %d requests / %d tokens, want 3 / 3000", p.Running, p.ContextTokens)
	}
	if a, b := tc.Cost(r, &cs[0], 0), tc.Cost(r, &cs[1], 0); a <= b {
		t.Fatalf("cost with pinned sessions %v not above the idle endpoint's %v", a, b)
	}
	r.NewSession = false
	if p := tc.Predict(r, &cs[0]); p.Running != 0 {
		t.Fatalf("a pinned request sees %d running, want 0: pins only weigh where a session starts", p.Running)
	}
	r.NewSession, tc.SessionLoad = true, false
	if p := tc.Predict(r, &cs[0]); p.Running != 0 {
		t.Fatalf("sessionLoad off: a new session sees %d running, want 0", p.Running)
	}
}

func TestCommonBlocks(t *testing.T) {
	blocks := func(bs ...int) []Candidate {
		out := make([]Candidate, len(bs))
		for i, b := range bs {
			out[i].CachedBlocks = b
		}
		return out
	}
	many := make([]int, 12) // past the fixed buffer: 0..11
	for i := range many {
		many[i] = i
	}
	cases := []struct {
		name   string
		cached []int
		k      int
		want   int
	}{
		{"two holders", []int{5, 3, 9, 9}, 2, 9},
		{"second largest", []int{5, 3, 9}, 2, 5},
		{"third largest", []int{1, 4, 2, 3}, 3, 2},
		{"one holder is not common", []int{0, 0, 7}, 2, 0},
		{"off", []int{9, 9}, 0, 0},
		{"more holders than candidates", []int{9, 9}, 3, 0},
		{"k past the buffer", many, 10, 2},
	}
	for _, c := range cases {
		if got := CommonBlocks(blocks(c.cached...), c.k); got != c.want {
			t.Errorf("%s: CommonBlocks(%v, %d) = %d, want %d", c.name, c.cached, c.k, got, c.want)
		}
	}
}

// TestCommonPrefixChargedOnce: a new conversation (2,000-token system prompt
// plus 300 tokens of its own) on three endpoints, two of which hold the
// prompt and run 18 requests each while the third is idle. Computing the
// prompt once more on the idle endpoint is not charged prefillWeight when
// two endpoints already hold it, so the conversation goes there; with
// commonHolders 0, or when only one endpoint holds the prompt, it stays
// with a holder.
func TestCommonPrefixChargedOnce(t *testing.T) {
	busy := cand{cached: 125, total: 100000, active: activework.Counts{Requests: 18, ContextTokens: 54000}}
	idle := cand{total: 100000}
	r := Request{PromptTokens: 2300, Blocks: 143, BlockSize: 16}
	cases := []struct {
		name    string
		holders int
		specs   []cand
		idle    bool // the idle endpoint (10.0.0.3) rather than a holder
	}{
		{"common prompt, default", 2, []cand{busy, busy, idle}, true},
		{"common prompt, off", 0, []cand{busy, busy, idle}, false},
		{"held once", 2, []cand{busy, {total: 100000, active: busy.active}, idle}, false},
		{"needs three holders", 3, []cand{busy, busy, idle}, false},
	}
	for _, c := range cases {
		s := mustNew(t, router(v1.ModeKV, func(rc *v1.Router) { rc.KVCost.CommonHolders = &c.holders }))
		got, _, err := s.Schedule(&r, fleet(t, c.specs...))
		if err != nil {
			t.Fatal(err)
		}
		if onIdle := got[0].Key() == "10.0.0.3:8000"; onIdle != c.idle {
			t.Errorf("%s: chose %s; want the idle endpoint: %v", c.name, got[0].Key(), c.idle)
		}
	}
	// The charge itself, at 1,000 tokens/s: on an endpoint without the
	// common prompt only the 300 tokens beyond it count again, whatever its
	// queue (which its TTFT counts).
	tc := TimeCost{Base: costmodel.Rates{PrefillTokensPerSec: 1000, StepOverhead: 0.01}, PrefillWeight: 1, CommonHolders: 2}
	for _, queued := range []int{0, 4096, 20000} {
		cs := fleet(t, cand{total: 100000, active: activework.Counts{PrefillTokens: queued}})
		p := tc.Predict(&r, &cs[0])
		if got, want := tc.Cost(&r, &cs[0], 125), p.TTFT+0.3; math.Abs(got-want) > 1e-9 {
			t.Errorf("%d tokens queued: cost with a common prompt %v, want TTFT + 0.3 s = %v", queued, got, want)
		}
		if got, want := tc.Cost(&r, &cs[0], 0), p.TTFT+p.Own; math.Abs(got-want) > 1e-9 || math.Abs(p.Own-2.3) > 1e-9 {
			t.Errorf("%d tokens queued: cost without %v, want TTFT + own prefill (2.3 s, got %v) = %v", queued, got, p.Own, want)
		}
	}
}

// TestHotPrefixGetsASecondCopy: a 4,300-token request whose 4,000-token
// prefix only A holds. A is prefilling another 4,300-token prompt, so it
// would answer no sooner than B, with no prefill queued, computing the whole
// prompt. Where three requests in flight on A share the prefix (hot) B gets
// a second copy: its prefill and its batch's stall are not charged for the
// prefix. Otherwise the request waits on A, as recomputing a prefix one
// endpoint holds is.
func TestHotPrefixGetsASecondCopy(t *testing.T) {
	busy := activework.Counts{PrefillTokens: 4300, Requests: 5, ContextTokens: 25000}
	idle := activework.Counts{Requests: 5, ContextTokens: 25000}
	cases := []struct {
		name          string
		sharers       int
		holder, other activework.Counts // A's and B's active work
		queued        bool
		mut           func(*v1.Router)
		second        bool
	}{
		{"hot prefix, busy holder", 3, busy, idle, false, nil, true},
		{"two sharers are not hot", 2, busy, idle, false, nil, false},
		{"the request waited in the queue", 3, busy, idle, true, nil, false},
		{"holder answers sooner", 3, idle, idle, false, nil, false},
		// B would answer sooner (4,800 tokens ahead of its first token against A's 8,300) but has prefill waiting.
		{"prefill queued on the other", 3, activework.Counts{PrefillTokens: 8000, Requests: 5, ContextTokens: 25000},
			activework.Counts{PrefillTokens: 500, Requests: 5, ContextTokens: 25000}, false, nil, false},
		{"rule off", 3, busy, idle, false, func(r *v1.Router) { r.KVCost.HotPrefixRequests = new(int) }, false},
		{"blocks model", 3, busy, idle, false, func(r *v1.Router) { r.KVCost.Model = v1.CostModelBlocks }, false},
	}
	for _, c := range cases {
		var mut []func(*v1.Router)
		if c.mut != nil {
			mut = append(mut, c.mut)
		}
		s := mustNew(t, router(v1.ModeKV, mut...))
		cands := fleet(t, cand{cached: 250, total: 100000, active: c.holder}, cand{total: 100000, active: c.other})
		cands[0].Sharers = c.sharers
		r := Request{PromptTokens: 4300, Blocks: 268, BlockSize: 16, Queued: c.queued}
		got, _, err := s.Schedule(&r, cands)
		if err != nil {
			t.Fatal(err)
		}
		if second := got[0].Key() == "10.0.0.2:8000"; second != c.second {
			t.Errorf("%s: chose %s; want the second endpoint: %v", c.name, got[0].Key(), c.second)
		}
	}
}

// TestSecondCopyChargesOnlyItsSuffix pins the charge by hand: on B, with
// A's hot prefix of 250 blocks (4,000 tokens) and B's TTFT no later than
// A's, prefillWeight and the stall count the 300 tokens beyond it.
func TestSecondCopyChargesOnlyItsSuffix(t *testing.T) {
	tc := TimeCost{Base: costmodel.Rates{PrefillTokensPerSec: 1000, StepOverhead: 0.01}, PrefillWeight: 1, DecodeWeight: 0.5, HotRequests: 3}
	cs := fleet(t, cand{cached: 250, total: 100000, active: activework.Counts{PrefillTokens: 8000, Requests: 2}},
		cand{total: 100000, active: activework.Counts{Requests: 4}})
	cs[0].Sharers = 3
	r := Request{PromptTokens: 4300, Blocks: 268, BlockSize: 16}
	preds := []Prediction{tc.Predict(&r, &cs[0]), tc.Predict(&r, &cs[1])}
	hot, ttft := tc.hotPrefix(&r, cs, preds)
	if hot != 250 || ttft != preds[0].TTFT {
		t.Fatalf("hot prefix %d blocks at TTFT %v, want 250 at A's %v", hot, ttft, preds[0].TTFT)
	}
	p := preds[1]
	got := tc.cost(&r, &cs[1], p, spread{hot: hot, holderTTFT: ttft})
	// 0.3 s beyond the prefix, charged once more and as the stall of B's 4 requests.
	want := p.TTFT + 0.3 + 0.5*(p.Decode-p.Stall+4*0.3)
	if math.Abs(got-want) > 1e-9 || math.Abs(p.Stall-4*4.3) > 1e-9 {
		t.Fatalf("cost %v, want %v (stall without the rule %v, want 17.2)", got, want, p.Stall)
	}
}

// A popular prefix held by one endpoint (Request.Popular) gets a second
// copy: B, with no prefill queued, is judged as if it held the prefix (its
// one running request still waits out the prefill), so it wins over A,
// which holds it but runs more; without the flag, with prefill waiting on
// B, or with many requests running on B, the request stays on A.
func TestPopularPrefixGetsASecondCopy(t *testing.T) {
	holder := activework.Counts{Requests: 9, ContextTokens: 45000}
	idle := activework.Counts{Requests: 1, ContextTokens: 5000}
	cases := []struct {
		name    string
		popular bool
		other   activework.Counts
		mut     func(*v1.Router)
		second  bool
	}{
		{"popular, one holder", true, idle, nil, true},
		{"not popular", false, idle, nil, false},
		{"prefill queued on the other", true, activework.Counts{PrefillTokens: 500, Requests: 1, ContextTokens: 5000}, nil, false},
		{"a full batch on the other", true, activework.Counts{Requests: 9, ContextTokens: 45000}, nil, false},
		{"blocks model", true, idle, func(r *v1.Router) { r.KVCost.Model = v1.CostModelBlocks }, false},
	}
	for _, c := range cases {
		var mut []func(*v1.Router)
		if c.mut != nil {
			mut = append(mut, c.mut)
		}
		s := mustNew(t, router(v1.ModeKV, mut...))
		cands := fleet(t, cand{cached: 250, total: 100000, active: holder}, cand{total: 100000, active: c.other})
		r := Request{PromptTokens: 4300, Blocks: 268, BlockSize: 16, Popular: c.popular}
		got, _, err := s.Schedule(&r, cands)
		if err != nil {
			t.Fatal(err)
		}
		if second := got[0].Key() == "10.0.0.2:8000"; second != c.second {
			t.Errorf("%s: chose %s; want the second endpoint: %v", c.name, got[0].Key(), c.second)
		}
	}
}

// TestPopularCopyPricedAsHeld pins the rule's price: an endpoint with no
// prefill queued costs, for a popular request, what it would if it held the
// prefix, plus the stall of the prefix's prefill on its running requests
// (decodeWeight x running x the prefix's prefill time); one with prefill
// queued keeps its own price.
func TestPopularCopyPricedAsHeld(t *testing.T) {
	tc := TimeCost{Base: costmodel.Rates{PrefillTokensPerSec: 1000, StepOverhead: 0.01}, PrefillWeight: 1, DecodeWeight: 0.5}
	r := Request{PromptTokens: 4300, Blocks: 268, BlockSize: 16, Popular: true}
	for _, queued := range []int{0, 500} {
		active := activework.Counts{PrefillTokens: queued, Requests: 4, ContextTokens: 8000}
		cs := fleet(t, cand{cached: 250, total: 100000, active: activework.Counts{Requests: 2}},
			cand{total: 100000, active: active}, cand{cached: 250, total: 100000, active: active})
		sp := spread{longest: LongestHeld(cs)}
		copyCost := tc.cost(&r, &cs[1], tc.Predict(&r, &cs[1]), sp)
		heldCost := tc.cost(&r, &cs[2], tc.Predict(&r, &cs[2]), sp)
		plain := r
		plain.Popular = false
		ownCost := tc.cost(&plain, &cs[1], tc.Predict(&plain, &cs[1]), sp)
		// 4 running requests each wait out the prefix's 4,000 tokens at 1,000/s, at decodeWeight 0.5.
		want := heldCost + 0.5*4*4.0
		if queued > 0 {
			want = ownCost
		}
		if math.Abs(copyCost-want) > 1e-9 {
			t.Errorf("queued %d: the copy costs %v, want %v (as held %v, its own %v)", queued, copyCost, want, heldCost, ownCost)
		}
	}
}

// TestPrefillPressureHandChecked: 1,000 prefill tokens/s, 10 ms steps, 100
// output tokens, nothing running: the decode lasts 1 s. Prefills arriving
// at 500 tokens/s take half the endpoint's time and stretch it by 1 s; at
// 250, by 1/3 s; past 900 the share is capped at 0.9 (9 s).
func TestPrefillPressureHandChecked(t *testing.T) {
	tc := TimeCost{Base: costmodel.Rates{PrefillTokensPerSec: 1000, StepOverhead: 0.01, OutputTokens: 100}, DecodeWeight: 1}
	r := Request{PromptTokens: 10, BlockSize: 16}
	for _, c := range []struct{ rate, want float64 }{{0, 0}, {250, 1.0 / 3}, {500, 1}, {900, 9}, {5000, 9}} {
		cand := fleet(t, cand{})[0]
		cand.PrefillRate = c.rate
		p := tc.Predict(&r, &cand)
		if math.Abs(p.Pressure-c.want) > 1e-9 || math.Abs(p.Decode-p.Stall-p.Pressure) > 1e-9 {
			t.Errorf("rate %v: pressure %v (decode %v, stall %v), want %v", c.rate, p.Pressure, p.Decode, p.Stall, c.want)
		}
	}
}

// TestPrefillPressureSteersDecodes: two idle endpoints, the first taking
// 8,000 cold prompt tokens a second; a request with nothing cached goes to
// the second. The same request with a 6,000-token prefix cached on the
// first stays there: recomputing it costs more than the slower decode.
func TestPrefillPressureSteersDecodes(t *testing.T) {
	s := mustNew(t, router(v1.ModeKV))
	r := Request{PromptTokens: 7200, Blocks: 450, BlockSize: 16}
	for _, tc := range []struct {
		cached int
		want   string
	}{{0, "10.0.0.2:8000"}, {375, "10.0.0.1:8000"}} {
		cands := fleet(t, cand{cached: tc.cached, total: 19000}, cand{total: 19000})
		cands[0].PrefillRate = 8000
		got, _, err := s.Schedule(&r, cands)
		if err != nil || got[0].Key() != tc.want {
			t.Errorf("cached %d blocks on the busy one: chose %v (err %v), want %s", tc.cached, keys(got), err, tc.want)
		}
	}
	// Without the rate the two cost the same: the choice above is the pressure's.
	tcost := kvCostFor(router(v1.ModeKV).KVCost).(costScorer).t
	cands := fleet(t, cand{total: 19000}, cand{total: 19000})
	if a, b := tcost.Cost(&r, &cands[0], 0), tcost.Cost(&r, &cands[1], 0); a != b {
		t.Fatalf("idle endpoints cost %v and %v without prefill pressure", a, b)
	}
}

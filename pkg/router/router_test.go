package router

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"

	v1 "github.com/kvpick/kvpick/api/v1alpha1"
	"github.com/kvpick/kvpick/pkg/activework"
	"github.com/kvpick/kvpick/pkg/apierr"
	"github.com/kvpick/kvpick/pkg/endpoints"
	"github.com/kvpick/kvpick/pkg/kvevents"
	"github.com/kvpick/kvpick/pkg/kvfeed"
	"github.com/kvpick/kvpick/pkg/kvindex"
	"github.com/kvpick/kvpick/pkg/request"
	"github.com/kvpick/kvpick/pkg/route"
	"github.com/kvpick/kvpick/pkg/scrape"
	"github.com/kvpick/kvpick/pkg/tokenize"
)

type fixture struct {
	r      *Router
	set    *endpoints.Set
	active *activework.Tracker
	index  *kvindex.Index
	feed   *kvfeed.Feed
	now    time.Time
	mu     sync.Mutex
}

func (f *fixture) clock() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

func newFixture(t testing.TB, n int, mut func(*v1.Config), epMut ...func(int, *endpoints.Endpoint)) *fixture {
	t.Helper()
	cfg := &v1.Config{} // defaults after the caller's settings, as a config file gets them
	cfg.Router.Seed = 1
	cfg.KV.Observation = v1.ObservePredicted // most tests here are about the predicted path; auto's set it
	if mut != nil {
		mut(cfg)
	}
	cfg.SetDefaults()
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	f := &fixture{set: endpoints.NewSet(), index: kvindex.New(kvindex.Options{}), now: time.Unix(1e6, 0)}
	var eps []endpoints.Endpoint
	for i := 0; i < n; i++ {
		eps = append(eps, endpoints.Endpoint{Address: fmt.Sprintf("10.0.0.%d", i+1), Port: 8000, Models: []string{"m"},
			LoRAAdapters: []string{"sql"}, Capacity: endpoints.Capacity{TotalBlocks: 100000, MaxBatchedTokens: 8192}})
		for _, m := range epMut {
			m(i, &eps[i])
		}
	}
	if err := f.set.Replace(eps); err != nil {
		t.Fatal(err)
	}
	var r *Router
	f.active = activework.New(time.Minute, func() {
		if r != nil {
			r.Notify()
		}
	})
	f.feed = kvfeed.New(kvfeed.Options{Set: f.set, Index: f.index, Log: logr.Discard(), Now: f.clock,
		Auto: cfg.KV.Observation == v1.ObserveAuto, SilenceAfter: cfg.KV.EventsSilenceAfter.Duration, Pool: t.Name()})
	r, err := New(cfg, Deps{Set: f.set, Index: f.index, Active: f.active, Log: logr.Discard(), Now: f.clock, Events: f.feed})
	if err != nil {
		t.Fatal(err)
	}
	f.r = r
	t.Cleanup(r.Close)
	return f
}

// route is Route followed by the stream's Commit once the answer is out.
func (f *fixture) route(ctx context.Context, in *route.Input) (route.Decision, error) {
	d, err := f.r.Route(ctx, in)
	if err == nil {
		d.Commit()
	}
	return d, err
}

func input(prompt string, headers map[string]string) *route.Input {
	if headers == nil {
		headers = map[string]string{}
	}
	return &route.Input{Path: "/v1/completions", Headers: headers,
		Request: &request.Request{Kind: request.KindCompletions, Model: "m", Prompt: []byte(prompt), MaxTokens: 16}}
}

func words(prefix string, n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "%s%d ", prefix, i)
	}
	return b.String()
}

func TestSharedPrefixesLandTogetherAndLoadSpreads(t *testing.T) {
	f := newFixture(t, 4, nil)
	where := map[string]map[string]int{} // prefix group -> endpoint -> count
	var open []route.Decision
	for i := 0; i < 40; i++ {
		group := fmt.Sprintf("g%d", i%4)
		d, err := f.route(context.Background(), input(words(group, 600)+words("q", 20+i), nil))
		if err != nil {
			t.Fatal(err)
		}
		if where[group] == nil {
			where[group] = map[string]int{}
		}
		where[group][d.Endpoints()[0]]++
		open = append(open, d)
		d.FirstToken()
	}
	used := map[string]bool{}
	for g, eps := range where {
		if len(eps) != 1 {
			t.Errorf("group %s spread over %v, want one endpoint", g, eps)
		}
		for ep := range eps {
			used[ep] = true
		}
	}
	if len(used) != 4 {
		t.Errorf("4 groups used %d endpoints, want all 4: %v", len(used), where)
	}
	for _, d := range open {
		d.Done(nil)
	}
	for _, e := range f.set.Snapshot().List {
		if c := f.active.Counts(e.Key()); c != (activework.Counts{}) {
			t.Fatalf("active work leaked on %s: %+v", e.Key(), c)
		}
	}
}

func TestQueueWaitsForCapacityAndHonoursPriority(t *testing.T) {
	f := newFixture(t, 1, func(c *v1.Config) {
		th := 0.5
		c.Admission.QueueThreshold = &th
		c.Objectives = map[string]int{"critical": 10, "batch": -1}
	})
	// 8,000 approximate tokens of prefill puts the only endpoint over 0.5 x 8192.
	first, err := f.route(context.Background(), input(words("doc", 4000), nil))
	if err != nil {
		t.Fatal(err)
	}
	results := make(chan string, 2)
	route := func(name, objective string) {
		// ~5,000 tokens each: once one is admitted, its reservation keeps the
		// other queued until its prefill is done, so the order is observable.
		d, err := f.route(context.Background(), input(words(name, 2500), map[string]string{"x-gateway-inference-objective": objective}))
		if err != nil {
			results <- "error " + err.Error()
			return
		}
		results <- name
		d.FirstToken()
		d.Done(nil)
	}
	go route("low", "batch")
	waitLen(t, f.r, 1)
	go route("high", "critical")
	waitLen(t, f.r, 2)
	select {
	case got := <-results:
		t.Fatalf("%s dispatched while the fleet was over threshold", got)
	case <-time.After(50 * time.Millisecond):
	}
	first.FirstToken() // prefill done: capacity frees
	if a, b := <-results, <-results; a != "high" || b != "low" {
		t.Fatalf("dispatch order %s, %s; want high then low", a, b)
	}
	first.Done(nil)
}

func TestQueueFullAndCancel(t *testing.T) {
	f := newFixture(t, 1, func(c *v1.Config) {
		th := 0.1
		c.Admission.QueueThreshold = &th
		c.Admission.MaxQueueLength = 1
	})
	busy, err := f.route(context.Background(), input(words("doc", 2000), nil))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { _, err := f.route(ctx, input("waiting", nil)); errc <- err }()
	waitLen(t, f.r, 1)
	_, err = f.route(context.Background(), input("overflow", nil))
	if e := apierr.As(err); e.Status != 429 || !strings.Contains(e.Message, "full") {
		t.Fatalf("overflow: %v, want 429 queue full", err)
	}
	cancel()
	if err := <-errc; err == nil || !errors.Is(err, context.Canceled) {
		t.Fatalf("canceled waiter got %v", err)
	}
	waitLen(t, f.r, 0)
	busy.Done(nil)
}

func TestServedMovesAccountingAndSessionsPin(t *testing.T) {
	f := newFixture(t, 3, nil)
	hdr := map[string]string{"x-session-id": "s1"}
	d, err := f.route(context.Background(), input("hello there", hdr))
	if err != nil {
		t.Fatal(err)
	}
	primary, fallback := d.Endpoints()[0], d.Endpoints()[1]
	d.Served("10.9.9.9:1") // not in the decision: ignored
	if f.active.Counts(primary).Requests != 1 || f.active.Counts("10.9.9.9:1").Requests != 0 {
		t.Fatal("an unknown served endpoint moved the accounting")
	}
	d.Served(fallback)
	if f.active.Counts(primary).Requests != 0 || f.active.Counts(fallback).Requests != 1 {
		t.Fatalf("served did not move accounting: %+v %+v", f.active.Counts(primary), f.active.Counts(fallback))
	}
	d.Done(nil)
	d.Done(errors.New("again")) // idempotent
	for i := 0; i < 5; i++ {
		d2, err := f.route(context.Background(), input(words("other", 300+i), hdr))
		if err != nil {
			t.Fatal(err)
		}
		if d2.Endpoints()[0] != primary {
			t.Fatalf("session moved from %s to %s", primary, d2.Endpoints()[0])
		}
		d2.Done(nil)
	}
}

func TestWorkerHeadersAndBodylessRequests(t *testing.T) {
	f := newFixture(t, 2, func(c *v1.Config) { c.Router.WorkerHeaders = true }, func(i int, e *endpoints.Endpoint) {
		e.WorkerID = endpoints.WorkerID(fmt.Sprint(7587889712345678900 + i))
		rank := i + 2
		e.DPRank = &rank
	})
	d, err := f.route(context.Background(), &route.Input{Path: "/v1/models", Headers: map[string]string{}})
	if err != nil {
		t.Fatal(err)
	}
	i := int(d.Endpoints()[0][len("10.0.0.")] - '1')
	want := []route.HeaderValue{{Key: "x-worker-instance-id", Value: fmt.Sprint(7587889712345678900 + i)},
		{Key: "x-dp-rank", Value: fmt.Sprint(i + 2)}, {Key: "x-data-parallel-rank", Value: fmt.Sprint(i + 2)}}
	if h := d.Headers(); !reflect.DeepEqual(h, want) {
		t.Fatalf("worker headers %v, want %v", h, want)
	}
	d.Done(nil)
}

// router.workerHeaders with an endpoint lacking a numeric id stops start-up.
func TestWorkerHeadersNeedNumericIDs(t *testing.T) {
	cfg := v1.Default()
	cfg.Router.WorkerHeaders = true
	set := endpoints.NewSet()
	if err := set.Replace([]endpoints.Endpoint{{Address: "10.0.0.1", Port: 8000, WorkerID: "1"}, {Address: "10.0.0.2", Port: 8000}}); err != nil {
		t.Fatal(err)
	}
	_, err := New(cfg, Deps{Set: set, Index: kvindex.New(kvindex.Options{}), Active: activework.New(time.Minute, nil), Log: logr.Discard()})
	if err == nil || !strings.Contains(err.Error(), "10.0.0.2:8000") || !strings.Contains(err.Error(), "workerId") {
		t.Fatalf("New = %v, want a refusal naming 10.0.0.2:8000", err)
	}
}

func TestObservedEventsDriveMatches(t *testing.T) {
	f := newFixture(t, 2, func(c *v1.Config) { c.KV.Observation = v1.ObserveEvents })
	prompt := words("shared", 400)
	tokens := tokenize.Approx(nil, prompt)
	full := len(tokens) / 16 * 16
	hashes := make([]uint64, full/16)
	for i := range hashes {
		hashes[i] = uint64(1000 + i) // engine hashes are not ours
	}
	target := "10.0.0.2:8000"
	f.feed.HandleBatch(target, kvevents.Batch{Events: []kvevents.Event{kvevents.BlockStored{BlockHashes: hashes, TokenIDs: tokens[:full], BlockSize: 16}}})
	p, err := f.r.Prepare(context.Background(), input(prompt, nil))
	if err != nil {
		t.Fatal(err)
	}
	if got := f.r.cachedBlocksOn(p, target); got != len(hashes) {
		t.Fatalf("observed match %d blocks, want %d", got, len(hashes))
	}
	d, err := f.r.Decide(p)
	if err != nil || d.Endpoints()[0] != target {
		t.Fatalf("decision %v err %v, want %s", d.Endpoints(), err, target)
	}
	d.Done(nil)
	// The events path never records predictions: the other endpoint stays cold.
	if f.r.cachedBlocksOn(p, "10.0.0.1:8000") != 0 {
		t.Fatal("prediction recorded on the events path")
	}
	f.feed.HandleBatch(target, kvevents.Batch{Events: []kvevents.Event{kvevents.AllBlocksCleared{}}})
	if f.r.cachedBlocksOn(p, target) != 0 {
		t.Fatal("cleared cache still matched")
	}
}

func waitLen(t *testing.T, r *Router, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for r.queue.Len() != n {
		if time.Now().After(deadline) {
			t.Fatalf("queue length %d, want %d", r.queue.Len(), n)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// With queueing on, a fleet whose endpoints are all busy holds a request in
// the queue instead of answering 503, and dispatches it when one frees.
func TestQueueHoldsWhileAllBusy(t *testing.T) {
	f := newFixture(t, 1, func(c *v1.Config) {
		th := 100.0 // the prefill threshold never binds; only busy does
		c.Admission.QueueThreshold = &th
		n := 100
		c.Router.Busy.ActivePrefillTokens = &n
	})
	busy, err := f.route(context.Background(), input(words("doc", 500), nil))
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() {
		d, err := f.route(context.Background(), input("short", nil))
		if err == nil {
			d.Done(nil)
		}
		got <- err
	}()
	waitLen(t, f.r, 1)
	busy.Done(nil)
	if err := <-got; err != nil {
		t.Fatalf("queued request failed: %v", err)
	}
}

// An endpoint that leaves the set leaves the index too: if it comes back, it
// comes back cold.
func TestDepartedEndpointIsForgotten(t *testing.T) {
	f := newFixture(t, 2, nil)
	p, err := f.r.Prepare(context.Background(), input(words("keep", 300), nil))
	if err != nil {
		t.Fatal(err)
	}
	d, err := f.r.Decide(p)
	if err != nil {
		t.Fatal(err)
	}
	d.Done(nil)
	chosen := d.Endpoints()[0]
	if f.r.cachedBlocksOn(p, chosen) == 0 {
		t.Fatal("decision not recorded in the index")
	}
	all := f.set.Snapshot().List
	var rest []endpoints.Endpoint
	for _, e := range all {
		if e.Key() != chosen {
			rest = append(rest, e.Endpoint)
		}
	}
	if err := f.set.Replace(rest); err != nil {
		t.Fatal(err)
	}
	var back []endpoints.Endpoint
	for _, e := range all {
		back = append(back, e.Endpoint)
	}
	if err := f.set.Replace(back); err != nil {
		t.Fatal(err)
	}
	if got := f.r.cachedBlocksOn(p, chosen); got != 0 {
		t.Fatalf("returning endpoint still holds %d predicted blocks", got)
	}
}

// TestCommitRecordsTheChoice: Route records the request, its prefill and its predicted prefix on the primary at
// once (concurrent decisions must see them); the rest lands when the stream commits, and a decision that ends
// before its commit leaves no active work behind.
func TestCommitRecordsTheChoice(t *testing.T) {
	for _, commit := range []bool{true, false} {
		f := newFixture(t, 2, nil)
		d, err := f.r.Route(context.Background(), input(words("doc", 300), nil))
		if err != nil {
			t.Fatal(err)
		}
		ep := d.Endpoints()[0]
		d.FirstToken() // before Commit: ignored
		if c := f.active.Counts(ep); c.Requests != 1 || c.PrefillTokens == 0 {
			t.Fatalf("chosen, not committed: %+v, want the request and its prefill counted", c)
		}
		if got := f.r.cachedBlocksOn(d.(*Decision).Prepared(), ep); got == 0 {
			t.Fatal("predicted cache not recorded when chosen")
		}
		blocks := f.active.Counts(ep).DecodeBlocks
		if commit {
			d.Commit()
			d.Commit() // idempotent
			if c := f.active.Counts(ep); c.Requests != 1 || c.PrefillTokens == 0 || c.DecodeBlocks <= blocks {
				t.Fatalf("after commit: %+v, want shared blocks added to %d", c, blocks)
			}
		}
		d.Done(nil)
		d.Commit() // after Done: ignored
		if c := f.active.Counts(ep); f.active.InFlight() != 0 || c != (activework.Counts{}) {
			t.Fatalf("commit=%v: after Done %+v, in flight %d", commit, c, f.active.InFlight())
		}
	}
}

// TestChosenBeforeCommitIsSeen: a decision chosen but not yet committed already counts against its endpoint, so
// a burst does not herd onto one endpoint and a busy threshold holds in the gap.
func TestChosenBeforeCommitIsSeen(t *testing.T) {
	f := newFixture(t, 2, func(c *v1.Config) {
		c.Router.Mode = v1.ModeLeastLoaded
		n := 100
		c.Router.Busy.ActivePrefillTokens = &n
	})
	var ds []route.Decision
	seen := map[string]bool{}
	for i := range 2 {
		d, err := f.r.Route(context.Background(), input(words(fmt.Sprint("doc", i), 300), nil))
		if err != nil {
			t.Fatal(err)
		}
		seen[d.Endpoints()[0]] = true
		ds = append(ds, d)
	}
	if len(seen) != 2 {
		t.Fatalf("two uncommitted decisions on %v: the first was not seen by the second", seen)
	}
	if _, err := f.r.Route(context.Background(), input("small", nil)); err == nil {
		t.Fatal("both endpoints past the busy threshold before commit, yet a third request was routed")
	}
	for _, d := range ds {
		d.Done(nil)
	}
}

// TestPredictedStride: the predicted index holds every stride-th block, so a repeated prompt is credited in
// steps of stride blocks.
func TestPredictedStride(t *testing.T) {
	prompt := strings.Repeat("abcd", 165) // bytes tokenizer: 165 tokens, 10 full blocks of 16
	for _, tc := range []struct{ stride, wantTokens int }{{1, 160}, {4, 128}, {16, 0}} {
		f := newFixture(t, 1, func(c *v1.Config) { c.KV.PredictedStride = tc.stride })
		first, err := f.route(context.Background(), input(prompt, nil))
		if err != nil {
			t.Fatal(err)
		}
		again, err := f.route(context.Background(), input(prompt, nil))
		if err != nil {
			t.Fatal(err)
		}
		if got := again.(*Decision).CachedTokens(); got != tc.wantTokens {
			t.Errorf("stride %d: cached %d tokens, want %d", tc.stride, got, tc.wantTokens)
		}
		first.Done(nil)
		again.Done(nil)
	}
}

// TestBurstSharingAPrefixSeesTheFirst: the second of two requests sharing a long prefix, chosen before the first
// commits, already sees the prefix predicted on the first one's endpoint.
func TestBurstSharingAPrefixSeesTheFirst(t *testing.T) {
	f := newFixture(t, 4, nil)
	prefix := words("shared", 2000)
	first, err := f.r.Route(context.Background(), input(prefix+words("a", 50), nil))
	if err != nil {
		t.Fatal(err)
	}
	second, err := f.r.Route(context.Background(), input(prefix+words("b", 50), nil))
	if err != nil {
		t.Fatal(err)
	}
	if got := second.(*Decision).CachedTokens(); got == 0 {
		t.Fatal("second request saw no cached prefix before the first committed")
	}
	first.Done(nil)
	second.Done(nil)
}

// TestReloadKeepsIndexCapacity: an endpoint whose file gives no KV size gets
// its index bound from the scraped total; a file reload must compute the same
// bound (it used to divide by the stride while the scrape did not, pruning the
// predicted entries to a quarter until the next scrape).
func TestReloadKeepsIndexCapacity(t *testing.T) {
	cfg := &v1.Config{}
	cfg.Router.Seed = 1
	cfg.KV.Observation = v1.ObservePredicted
	cfg.SetDefaults()
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	stride := cfg.KV.IndexStride()
	if stride < 2 {
		t.Fatalf("the predicted path's default stride is %d: this test needs > 1", stride)
	}
	set, ix := endpoints.NewSet(), kvindex.New(kvindex.Options{})
	eps := []endpoints.Endpoint{{Address: "10.0.0.1", Port: 8000, Models: []string{"m"}}}
	if err := set.Replace(eps); err != nil {
		t.Fatal(err)
	}
	_, err := New(cfg, Deps{Set: set, Index: ix, Active: activework.New(time.Minute, nil), Log: logr.Discard()})
	if err != nil {
		t.Fatal(err)
	}
	const total = 64 // scraped KV blocks
	key := eps[0].Key()
	sink := &scrape.StateSink{Set: set, Index: ix, Stride: stride}
	sink.UpdateScrape(key, scrape.Status{HasSample: true, Sample: scrape.Sample{TotalBlocks: total}})
	now := time.Now()
	for i := 0; i < 2*total; i++ { // distinct one-entry chains: fill to the bound
		ix.RecordPredicted(key, []uint64{uint64(i + 1)}, now)
	}
	before := ix.Stats().Entries
	if before == 0 || before > total/stride {
		t.Fatalf("index holds %d entries, want 1..%d (the bound)", before, total/stride)
	}
	if err := set.Replace(append([]endpoints.Endpoint(nil), eps...)); err != nil { // a reload
		t.Fatal(err)
	}
	if after := ix.Stats().Entries; after != before {
		t.Fatalf("reload pruned the index from %d to %d entries", before, after)
	}
}

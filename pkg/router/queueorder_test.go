package router

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	v1 "github.com/kvpick/kvpick/api/v1alpha1"
	"github.com/kvpick/kvpick/pkg/activework"
	"github.com/kvpick/kvpick/pkg/admission"
	"github.com/kvpick/kvpick/pkg/replicasync"
	"github.com/kvpick/kvpick/pkg/telemetry"
)

// orderFake is a Recorder and QueueOrder whose peers' queue is set by the test.
// The fake must stay a QueueOrder: a router whose Sync is not one runs
// without the shared order, and these tests would test nothing.
var _ replicasync.QueueOrder = (*orderFake)(nil)

type orderFake struct {
	recorder
	ahead bool // a peer's request goes before any asked rank
}

func (o *orderFake) Waiting(id uint64, model, endpoint string, rank admission.Rank) {
	o.note("waiting %d %s class=%d", id, model, rank.Class)
}
func (o *orderFake) Left(id uint64)                                                   { o.note("left %d", id) }
func (o *orderFake) Ahead(string, string, bool, admission.Rank, admission.Aging) bool { return o.ahead }

// queuedN prepares a request of n words and puts it in a simulated queue at class.
func queuedN(t *testing.T, f *fixture, class int, prefix string, n int) *Prepared {
	t.Helper()
	p, err := f.r.Prepare(context.Background(), input(words(prefix, n), nil))
	if err != nil {
		t.Fatal(err)
	}
	f.r.Waits(p, admission.Rank{Class: class, Enqueued: f.clock()}, admission.Aging{})
	return p
}

func queued(t *testing.T, f *fixture, class int) *Prepared { return queuedN(t, f, class, "q", 300) }

// TestSharedQueueOrder: a request that could go waits while a peer has one
// ranked first, for at most queueYield; peers hear of a request once it
// waits, under the id its Added then carries, and hear when it leaves.
func TestSharedQueueOrder(t *testing.T) {
	queueing := func(order string) func(*v1.Config) {
		return func(c *v1.Config) { th := 0.25; c.Admission.QueueThreshold = &th; c.ReplicaSync.QueueOrder = order }
	}
	t.Run("held for a peer, then routed under its announced id", func(t *testing.T) {
		f := newFixture(t, 2, nil)
		o := &orderFake{ahead: true}
		withSync(t, f, o, queueing(v1.QueueOrderShared))
		p := queued(t, f, 7)
		if f.r.Admissible(p) {
			t.Fatal("admitted while a peer's request ranks first")
		}
		for _, e := range f.set.Snapshot().List {
			if n := f.r.gate.Reserved(e.Key()); n != 0 {
				t.Fatalf("a held request keeps %d tokens reserved on %s", n, e.Key())
			}
		}
		f.r.Admissible(p) // still held: announced once only
		if got := o.take(); got != "waiting 1 m class=7" {
			t.Fatalf("peers heard %q", got)
		}
		o.ahead = false
		if !f.r.Admissible(p) {
			t.Fatal("not admitted once the peer's request went")
		}
		d, err := f.r.Decide(p)
		if err != nil {
			t.Fatal(err)
		}
		if got := o.take(); !strings.HasPrefix(got, "added 1 ") {
			t.Fatalf("routed as %q, want added under id 1", got)
		}
		d.Done(nil)
	})
	t.Run("the hold is bounded by queueYield", func(t *testing.T) {
		f := newFixture(t, 2, nil)
		o := &orderFake{ahead: true}
		withSync(t, f, o, queueing(v1.QueueOrderShared))
		p := queued(t, f, 7)
		if f.r.Admissible(p) {
			t.Fatal("admitted at once")
		}
		f.advance(f.r.cfg.ReplicaSync.QueueYield.Duration - time.Millisecond)
		if f.r.Admissible(p) {
			t.Fatal("admitted before queueYield passed")
		}
		f.advance(time.Millisecond)
		if !f.r.Admissible(p) {
			t.Fatal("still held after queueYield")
		}
	})
	t.Run("queueYield bounds the holds summed, not each", func(t *testing.T) {
		f := newFixture(t, 2, nil)
		o := &orderFake{ahead: true}
		withSync(t, f, o, queueing(v1.QueueOrderShared))
		yield := f.r.cfg.ReplicaSync.QueueYield.Duration
		holds := func(outcome string) (n, seconds float64) {
			var m dto.Metric
			if err := telemetry.ReplicaSyncHolds.WithLabelValues(outcome).(prometheus.Histogram).Write(&m); err != nil {
				t.Fatal(err)
			}
			return float64(m.Histogram.GetSampleCount()), m.Histogram.GetSampleSum()
		}
		went, wentFor := holds("peer_went")
		spent, spentFor := holds("yield_spent")
		p := queued(t, f, 7)
		if f.r.Admissible(p) {
			t.Fatal("admitted at once")
		}
		f.advance(yield - 50*time.Millisecond)
		o.ahead = false // the peer's request went: the hold ends
		if !f.r.Admissible(p) {
			t.Fatal("held with no peer ahead")
		}
		f.r.unreserve(p) // as if it had not gone after all
		o.ahead = true   // a peer's request ranks first again
		if f.r.Admissible(p) {
			t.Fatal("not held again with budget left")
		}
		f.advance(50 * time.Millisecond)
		if !f.r.Admissible(p) {
			t.Fatalf("held again past queueYield in all (%v)", yield)
		}
		went2, wentFor2 := holds("peer_went")
		spent2, spentFor2 := holds("yield_spent")
		if d1, d2 := went2-went, spent2-spent; d1 != 1 || d2 != 1 {
			t.Fatalf("holds ended: peer_went +%v, yield_spent +%v; want +1 each", d1, d2)
		}
		// The first hold lasted until the peer went, the second the rest of the yield.
		if d1, d2 := wentFor2-wentFor, spentFor2-spentFor; math.Abs(d1-(yield-50*time.Millisecond).Seconds()) > 1e-9 || math.Abs(d2-0.05) > 1e-9 {
			t.Fatalf("holds lasted: peer_went %vs, yield_spent %vs; want %vs and 0.05s", d1, d2, (yield - 50*time.Millisecond).Seconds())
		}
	})
	t.Run("a full fleet announces; leaving unrouted is heard once", func(t *testing.T) {
		f := newFixture(t, 1, nil)
		o := &orderFake{}
		withSync(t, f, o, queueing(v1.QueueOrderShared))
		first := queuedN(t, f, 1, "fill", 4000) // no prefix in common with the next: it is judged cold
		if !f.r.Admissible(first) {
			t.Fatal("an idle fleet refused")
		}
		if _, err := f.r.Decide(first); err != nil { // its prefill fills the endpoint past the threshold
			t.Fatal(err)
		}
		o.take()
		p := queued(t, f, 9)
		if f.r.Admissible(p) {
			t.Fatal("admitted past the threshold")
		}
		f.r.Abandon(p)
		f.r.Abandon(p)
		if got := o.take(); got != "waiting 2 m class=9; left 2" {
			t.Fatalf("peers heard %q", got)
		}
	})
	t.Run("fast path: never held, never announced", func(t *testing.T) {
		f := newFixture(t, 2, nil)
		o := &orderFake{ahead: true}
		withSync(t, f, o, queueing(v1.QueueOrderShared))
		p, err := f.r.Prepare(context.Background(), input(words("q", 300), nil))
		if err != nil {
			t.Fatal(err)
		}
		if !f.r.Admissible(p) {
			t.Fatal("a new arrival with room was held for a peer's waiting request")
		}
		if got := o.take(); got != "" {
			t.Fatalf("peers heard %q of a request that never queued", got)
		}
	})
	t.Run("chosen but never sent: peers hear it left", func(t *testing.T) {
		f := newFixture(t, 2, nil)
		o := &orderFake{ahead: true}
		withSync(t, f, o, queueing(v1.QueueOrderShared))
		p := queued(t, f, 3)
		f.r.Admissible(p)
		o.ahead = false
		if !f.r.Admissible(p) {
			t.Fatal("not admitted")
		}
		d, err := f.r.choose(p)
		if err != nil {
			t.Fatal(err)
		}
		d.Done(nil)
		if got := o.take(); got != "waiting 1 m class=3; left 1" {
			t.Fatalf("peers heard %q", got)
		}
	})
	t.Run("local order: never held, never announced", func(t *testing.T) {
		f := newFixture(t, 2, nil)
		o := &orderFake{ahead: true}
		withSync(t, f, o, queueing(v1.QueueOrderLocal))
		p := queued(t, f, 7)
		if !f.r.Admissible(p) {
			t.Fatal("held under the local order")
		}
		if got := o.take(); got != "" {
			t.Fatalf("peers heard %q", got)
		}
	})
}

// A peer's events change active work, which notifies the admission queue
// from inside Apply; the queue then asks the same Replica for the queue
// order. That must neither deadlock nor lose the wake-up: the queued request
// goes once the peer's prefill is done.
func TestPeerEventsReenterTheQueue(t *testing.T) {
	f := newFixture(t, 1, nil)
	var rt atomic.Pointer[Router]
	active := activework.New(time.Minute, func() {
		if r := rt.Load(); r != nil {
			r.Notify()
		}
	})
	rep, err := replicasync.New(replicasync.Options{ID: "b", Active: active, Index: f.index, Now: f.clock, Log: logr.Discard()})
	if err != nil {
		t.Fatal(err)
	}
	cfg := &v1.Config{}
	th := 0.25
	cfg.Admission.QueueThreshold, cfg.KV.Observation = &th, v1.ObservePredicted
	cfg.ReplicaSync.QueueOrder = v1.QueueOrderShared // the queue asks the replica for the order
	cfg.SetDefaults()
	r, err := New(cfg, Deps{Set: f.set, Index: f.index, Active: active, Log: logr.Discard(), Now: f.clock, Sync: rep})
	if err != nil {
		t.Fatal(err)
	}
	hung := false // a deadlocked queue cannot be closed: leave it
	t.Cleanup(func() {
		if !hung {
			r.Close()
		}
	})
	rt.Store(r)
	f.r, f.active = r, active
	ep := f.set.Snapshot().List[0].Key()
	peer := func(seq uint64, k replicasync.Kind) replicasync.Event {
		return replicasync.Event{Origin: "a", Epoch: 1, Seq: seq, Kind: k, Request: 1, Endpoint: ep,
			Work: activework.Work{PromptTokens: 8000, UncachedTokens: 8000, BlockSize: 16}}
	}
	rep.Apply("a", []replicasync.Event{peer(1, replicasync.KindAdded)}) // the endpoint is full
	done := make(chan error, 1)
	go func() {
		d, err := f.r.Route(context.Background(), input(words("q", 200), nil))
		if err == nil {
			d.Commit()
			d.Done(nil)
		}
		done <- err
	}()
	for f.r.queue.Len() == 0 {
		select {
		case err := <-done:
			t.Fatalf("routed at once (%v): the fleet was meant to be full", err)
		case <-time.After(time.Millisecond):
		}
	}
	applied := make(chan struct{})
	go func() { rep.Apply("a", []replicasync.Event{peer(2, replicasync.KindPrefillDone)}); close(applied) }()
	select {
	case <-applied:
	case <-time.After(10 * time.Second):
		hung = true
		t.Fatal("Apply deadlocked: the queue it notified asked the replica it holds")
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("the queued request was not released when the peer's prefill ended: %+v queue %d", f.active.Counts(ep), f.r.queue.Len())
	}
}

// Requests with the same model, adapter and subset hint share a group (one
// interned string), and any difference parts them.
func TestEligibilityGroup(t *testing.T) {
	mk := func(model, lora string, subset ...string) *Prepared {
		p := &Prepared{}
		p.Req.Model, p.Req.LoRA = model, lora
		if subset != nil {
			p.Req.SubsetPresent, p.Req.Subset = true, subset
		}
		return p
	}
	a, b := mk("m", "").eligibilityGroup(), mk("m", "").eligibilityGroup()
	if a != b || unsafe.StringData(a) != unsafe.StringData(b) {
		t.Fatalf("one model's groups %q and %q are not one interned string", a, b)
	}
	session := mk("m", "")
	session.Session = "s1" // judged by the pool-wide rule: a refusal of it says nothing of the others
	for _, other := range []*Prepared{mk("n", ""), mk("m", "sql"), mk("m", "", "10.0.0.1:8000"), session} {
		if g := other.eligibilityGroup(); g == a {
			t.Fatalf("%+v shares the plain model's group %q", other.Req, g)
		}
	}
	if mk("m", "", "x").eligibilityGroup() == mk("m", "", "y").eligibilityGroup() {
		t.Fatal("different subset hints share a group")
	}
}

// A fleet with no room under the loosest threshold refuses a whole group at
// the first request (the queue asks no more of it in that pass); a fleet
// with room refuses request by request, since each picks its own endpoint.
func TestFullFleetRefusesTheGroup(t *testing.T) {
	f := newFixture(t, 2, func(c *v1.Config) { th := 0.25; c.Admission.QueueThreshold = &th })
	now := f.clock()
	load := func(tokens int) {
		for _, e := range f.set.Snapshot().List {
			f.active.Add(e.Key(), activework.Work{PromptTokens: tokens, UncachedTokens: tokens, BlockSize: 16}, now)
		}
	}
	core := admission.NewCore[*Prepared](admission.Options{MaxLength: 8, MaxWait: time.Minute})
	for i := range 3 {
		p, err := f.r.Prepare(context.Background(), input(words(fmt.Sprint("cold", i, "-"), 100), nil))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := core.Push(&admission.Item[*Prepared]{ISLTokens: p.Req.PromptTokens, Value: p, Group: p.eligibilityGroup()}, now); err != nil {
			t.Fatal(err)
		}
	}
	asked := func() int {
		n := 0
		if got := core.Release(now, func(it *admission.Item[*Prepared]) bool { n++; return f.r.canDispatch(it) }); len(got) != 0 {
			t.Fatalf("released %d from a full fleet", len(got))
		}
		return n
	}
	load(9000) // past 1.0 x 8192 on both: nothing can go
	if n := asked(); n != 1 {
		t.Fatalf("full fleet: the gate was asked %d times, want once for the group", n)
	}
	// A fresh fleet at half load: room under 1.0, none under 0.25, so each
	// cold request is refused on its own.
	f = newFixture(t, 2, func(c *v1.Config) { th := 0.25; c.Admission.QueueThreshold = &th })
	load(4000)
	if n := asked(); n != 3 {
		t.Fatalf("fleet with room: the gate was asked %d times, want each of 3", n)
	}
}

// In a fleet with room for cached requests only, a release pass reads the
// fleet once for its cold requests (the rest are answered from coldMemo)
// and still releases a cached request queued behind them.
func TestColdMemoKeepsCachedRequests(t *testing.T) {
	f := newFixture(t, 2, func(c *v1.Config) { th := 0.25; c.Admission.QueueThreshold = &th })
	now := f.clock()
	eps := f.set.Snapshot().List
	for _, e := range eps {
		f.active.Add(e.Key(), activework.Work{PromptTokens: 4000, UncachedTokens: 4000, BlockSize: 16}, now)
	}
	core := admission.NewCore[*Prepared](admission.Options{MaxLength: 8, MaxWait: time.Minute})
	push := func(prompt string) *Prepared {
		p, err := f.r.Prepare(context.Background(), input(prompt, nil))
		if err != nil {
			t.Fatal(err)
		}
		it := &admission.Item[*Prepared]{ISLTokens: p.Req.PromptTokens, Value: p, Group: p.eligibilityGroup()}
		p.group = it.Group
		if _, err := core.Push(it, now); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for i := range 3 {
		push(words(fmt.Sprint("cold", i, "-"), 100))
	}
	cached := push(words("held-", 100))
	f.r.deps.Index.RecordPredicted(eps[0].Key(), cached.IndexChain, now)
	var pass uint64
	memoed := 0
	got := core.Release(now, func(it *admission.Item[*Prepared]) bool {
		pass = it.Pass()
		if f.r.cold.full(pass, it.Group) {
			memoed++
		}
		return f.r.canDispatch(it)
	})
	if len(got) != 1 || got[0].Value != cached {
		t.Fatalf("released %d requests, want the cached one alone", len(got))
	}
	f.r.unreserve(cached)
	if memoed != 3 { // the second and third cold requests, and the cached one, found the group marked
		t.Fatalf("%d requests found the group marked cold-full, want 3", memoed)
	}
	if f.r.cold.full(pass+1, cached.group) {
		t.Fatal("the memo outlived its pass")
	}
}

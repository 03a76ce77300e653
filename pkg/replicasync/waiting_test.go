package replicasync

import (
	"testing"
	"time"

	"github.com/kvpick/kvpick/pkg/admission"
)

// waitEv is origin "a"'s request req waiting for model at class, queued at t0+ms.
func waitEv(seq, req uint64, model string, class int, ms int) Event {
	return Event{Origin: "a", Epoch: 1, Seq: seq, Kind: KindWaiting, Request: req, Model: model, Class: class,
		At: t0.Add(time.Duration(ms) * time.Millisecond)}
}

// at sets the endpoint a waiting event waits for.
func at(e Event, endpoint string) Event { e.Endpoint = endpoint; return e }

// TestAheadFollowsPeersWaits: which of B's requests a peer's waiting ones go
// before, and when a wait ends.
func TestAheadFollowsPeersWaits(t *testing.T) {
	mine := admission.Rank{Class: 20, Enqueued: t0.Add(50 * time.Millisecond)} // the default queueSlack is 5ms
	cases := []struct {
		name     string
		evs      []Event
		model    string
		endpoint string // where the asking request would go ("": anywhere)
		anyToo   bool   // it is cold: waits for room anywhere count too
		rank     admission.Rank
		ahead    bool
	}{
		{"nothing waits", nil, "m", "", false, mine, false},
		{"smaller class waits", []Event{waitEv(1, 1, "m", 19, 9)}, "m", "", false, mine, true},
		{"larger class waits", []Event{waitEv(1, 1, "m", 21, 0)}, "m", "", false, mine, false},
		{"same class, queued more than the slack earlier", []Event{waitEv(1, 1, "m", 20, 44)}, "m", "", false, mine, true},
		{"same class, queued within the slack earlier", []Event{waitEv(1, 1, "m", 20, 46)}, "m", "", false, mine, false},
		{"same class, queued later", []Event{waitEv(1, 1, "m", 20, 90)}, "m", "", false, mine, false},
		{"smaller class, queued a moment earlier", []Event{waitEv(1, 1, "m", 19, 49)}, "m", "", false, mine, true},
		{"another model's wait does not hold this one", []Event{waitEv(1, 1, "other", 1, 0)}, "m", "", false, mine, false},
		{"higher priority waits", []Event{func() Event { e := waitEv(1, 1, "m", 40, 9); e.Priority = 1; return e }()}, "m", "", false, mine, true},
		{"routed: its added ends the wait", []Event{waitEv(1, 1, "m", 1, 0), ev(2, KindAdded, 1, e1)}, "m", "", false, mine, false},
		{"left the queue", []Event{waitEv(1, 1, "m", 1, 0), ev(2, KindLeft, 1, "")}, "m", "", false, mine, false},
		{"one of two left", []Event{waitEv(1, 1, "m", 1, 0), waitEv(2, 2, "m", 19, 0), ev(3, KindLeft, 1, "")}, "m", "", false, mine, true},
		{"the peer restarted", []Event{waitEv(1, 1, "m", 1, 0), withEpoch(ev(1, KindAdded, 5, e1), 2)}, "m", "", false, mine, false},
		{"a fast-path arrival waits behind any wait of its priority", []Event{waitEv(1, 1, "m", 60, 9)}, "m", "", false,
			admission.Rank{Class: int(^uint(0) >> 1), Enqueued: t0.Add(time.Second)}, true},
		{"going where its cache is: a wait for that endpoint holds it", []Event{at(waitEv(1, 1, "m", 1, 0), e1)}, "m", e1, false, mine, true},
		{"going where its cache is: a wait for another endpoint does not", []Event{at(waitEv(1, 1, "m", 1, 0), e2)}, "m", e1, false, mine, false},
		{"going where its cache is: a cold wait does not", []Event{waitEv(1, 1, "m", 1, 0)}, "m", e1, false, mine, false},
		{"a request that could go anywhere gives way to a wait for any endpoint", []Event{at(waitEv(1, 1, "m", 1, 0), e2)}, "m", "", false, mine, true},
		{"a cold request going to e1 gives way to a cold wait", []Event{waitEv(1, 1, "m", 1, 0)}, "m", e1, true, mine, true},
		{"a cold request going to e1 does not give way to a wait for e2", []Event{at(waitEv(1, 1, "m", 1, 0), e2)}, "m", e1, true, mine, false},
		{"a new waiting event moves the wait", []Event{at(waitEv(1, 1, "m", 1, 0), e1), at(waitEv(2, 1, "m", 1, 0), e2)}, "m", e1, false, mine, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, "b", nil)
			f.r.Apply("a", tc.evs)
			if got := f.r.Ahead(tc.model, tc.endpoint, tc.anyToo, tc.rank, admission.Aging{}); got != tc.ahead {
				t.Fatalf("Ahead = %v, want %v (peers waiting: %d)", got, tc.ahead, f.r.PeersWaiting())
			}
		})
	}
}

// A held-back request is released when a peer's wait ends: OnChange runs on
// Left, on the Added that routes it, on the peer's expiry and on the wait's
// own expiry, and not on events that end no wait.
func TestWaitEndsNotify(t *testing.T) {
	f := newFixture(t, "b", nil)
	n := 0
	f.r.opts.OnChange = func() { n++ }
	f.r.Apply("a", []Event{waitEv(1, 1, "m", 1, 0), waitEv(2, 2, "m", 1, 0), waitEv(3, 3, "m", 1, 0)})
	if n != 0 {
		t.Fatalf("waits notified %d times", n)
	}
	f.r.Apply("a", []Event{ev(4, KindLeft, 1, "")})
	f.r.Apply("a", []Event{ev(5, KindAdded, 2, e1)})
	if n != 2 {
		t.Fatalf("after left and added: %d notifications, want 2", n)
	}
	f.r.Apply("a", []Event{ev(6, KindLeft, 9, "")}) // unknown: nothing ends
	if n != 2 {
		t.Fatalf("an unknown left notified")
	}
	f.clk.add(2*f.r.opts.MaxWait + time.Second)
	f.r.Tick(f.clk.Now())
	if n != 3 || f.r.PeersWaiting() != 0 {
		t.Fatalf("expiry: %d notifications, %d waiting; want 3, 0", n, f.r.PeersWaiting())
	}
	f.r.Apply("a", []Event{waitEv(7, 4, "m", 1, 0)})
	f.r.ExpirePeer("a")
	if n != 4 || f.r.Ahead("m", "", false, admission.Rank{Class: 50}, admission.Aging{}) {
		t.Fatalf("peer expiry: %d notifications, ahead %v", n, f.r.Ahead("m", "", false, admission.Rank{Class: 50}, admission.Aging{}))
	}
}

// The sender's side: Waiting and Left are numbered events, Added ends a
// wait, a snapshot carries what still waits, and a peer applying the
// snapshot sees it.
func TestWaitingSentAndSnapshotted(t *testing.T) {
	a := newFixture(t, "a", nil)
	at := t0.Add(time.Millisecond)
	a.r.Waiting(1, "m", "", admission.Rank{Priority: 2, Class: 7, Enqueued: at})
	a.r.Waiting(2, "m", "", admission.Rank{Class: 9, Enqueued: at})
	a.r.Waiting(3, "m", "", admission.Rank{Class: 11, Enqueued: at})
	a.r.Added(1, e1, work(64), nil)
	a.r.Left(2)
	a.r.Left(2) // once only
	var c capture
	a.r.Flush(&c)
	kinds := []Kind{}
	for _, e := range c.evs {
		kinds = append(kinds, e.Kind)
	}
	want := []Kind{KindWaiting, KindWaiting, KindWaiting, KindAdded, KindLeft}
	if len(kinds) != len(want) {
		t.Fatalf("sent %v, want %v", kinds, want)
	}
	for i := range want {
		if kinds[i] != want[i] {
			t.Fatalf("sent %v, want %v", kinds, want)
		}
	}
	if e := c.evs[0]; e.Model != "m" || e.Priority != 2 || e.Class != 7 || !e.At.Equal(at) {
		t.Fatalf("waiting event %+v", e)
	}
	var waits []Event
	for _, e := range a.r.Snapshot() {
		if e.Kind == KindWaiting {
			waits = append(waits, e)
		}
	}
	if len(waits) != 1 || waits[0].Request != 3 || waits[0].Seq != 0 {
		t.Fatalf("snapshot waits %+v, want request 3 only, as state", waits)
	}
	b := newFixture(t, "b", nil)
	b.r.Apply("a", a.r.Snapshot())
	if !b.r.Ahead("m", "", false, admission.Rank{Class: 12}, admission.Aging{}) || b.r.Ahead("m", "", false, admission.Rank{Class: 10}, admission.Aging{}) {
		t.Fatal("a snapshot's wait does not order the peer's queue")
	}
}

// TestAheadInAgingTiers: a peer's wait is compared in the tiers the
// asking request's queue orders by (LateAfter 8s, MaxWait 30s: urgent from
// 25s), at this replica's clock; the first ranks are recomputed when a wait
// changes tier with no event in between, and when the tiers change (the
// queue's backlog outlived its surge window, or a new backlog began).
func TestAheadInAgingTiers(t *testing.T) {
	f := newFixture(t, "b", func(o *Options) { o.MaxWait = 30 * time.Second })
	// The peer's requests, queued at t0 and t0+4s; mine at t0+5s.
	f.r.Apply("a", []Event{waitEv(1, 1, "m", 20, 0), waitEv(2, 2, "m", 20, 4000)})
	mine := admission.Rank{Class: 20, Enqueued: t0.Add(5 * time.Second)}
	tiers := admission.Aging{LateAfter: 8 * time.Second, MaxWait: 30 * time.Second}
	windowed := tiers
	windowed.Window, windowed.Since = 12*time.Second, t0.Add(time.Second) // tiers end at t0+13s
	steps := []struct {
		at    time.Duration
		g     admission.Aging
		ahead bool
		why   string
	}{
		{6 * time.Second, tiers, true, "all on time: the oldest goes first"},
		{9 * time.Second, tiers, true, "the first is late; the second, on time and older than mine, goes first now"},
		{12500 * time.Millisecond, tiers, false, "both of the peer's are late, mine on time"},
		{12500 * time.Millisecond, windowed, false, "the same inside the surge window"},
		{12500 * time.Millisecond, admission.Aging{MaxWait: 30 * time.Second}, true, "tiers off: arrival order"},
		{12900 * time.Millisecond, windowed, false, "still inside the window"},
		{13100 * time.Millisecond, windowed, true, "the backlog outlived the window: arrival order"},
		{13500 * time.Millisecond, tiers, true, "all late: the oldest goes first"},
		{26 * time.Second, tiers, true, "the first is urgent"},
	}
	for _, s := range steps {
		f.clk.now = t0.Add(s.at)
		if got := f.r.Ahead("m", "", false, mine, s.g); got != s.ahead {
			t.Fatalf("at %v: Ahead = %v, want %v (%s)", s.at, got, s.ahead, s.why)
		}
	}
}

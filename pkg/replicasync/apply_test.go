package replicasync

import (
	"math"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"

	"github.com/kvpick/kvpick/pkg/activework"
	"github.com/kvpick/kvpick/pkg/endpoints"
	"github.com/kvpick/kvpick/pkg/telemetry"
)

// e1 and e2 are endpoint keys of the pool the rules test runs against.
const e1, e2 = "10.0.0.1:8000", "10.0.0.2:8000"

func withEpoch(e Event, epoch uint64) Event { e.Epoch = epoch; return e }
func from(e Event, origin string) Event     { e.Origin = origin; return e }

// TestApplyRules: B applies A's events; what B counts afterwards.
func TestApplyRules(t *testing.T) {
	snap := func(e Event) Event { e.Seq = 0; return e }
	cases := []struct {
		name          string
		evs           []Event
		remote        int            // peers' requests B counts
		prefill       map[string]int // endpoint -> prefill tokens on B
		dup, missed   float64        // counter deltas
		ignored       string         // a reason whose counter must grow
		ignoredGrowth float64
	}{
		{name: "added", evs: []Event{ev(1, KindAdded, 1, e1)}, remote: 1, prefill: map[string]int{e1: 64}},
		{name: "prefill done", evs: []Event{ev(1, KindAdded, 1, e1), ev(2, KindPrefillDone, 1, "")}, remote: 1, prefill: map[string]int{e1: 0}},
		{name: "freed", evs: []Event{ev(1, KindAdded, 1, e1), ev(2, KindFreed, 1, "")}, remote: 0, prefill: map[string]int{e1: 0}},
		{name: "duplicate applied once", evs: []Event{ev(1, KindAdded, 1, e1), ev(1, KindAdded, 1, e1), ev(2, KindAdded, 2, e1), ev(1, KindAdded, 1, e1)},
			remote: 2, prefill: map[string]int{e1: 128}, dup: 2},
		{name: "own events never applied", evs: []Event{from(ev(1, KindAdded, 1, e1), "b")}, remote: 0, ignored: "own", ignoredGrowth: 1},
		{name: "gap counted, later events applied", evs: []Event{ev(1, KindAdded, 1, e1), ev(5, KindAdded, 2, e2)},
			remote: 2, prefill: map[string]int{e1: 64, e2: 64}, missed: 3},
		{name: "freed of an unknown request", evs: []Event{ev(1, KindFreed, 9, "")}, remote: 0, ignored: "unknown_request", ignoredGrowth: 1},
		{name: "restart with a new epoch frees the old incarnation", evs: []Event{ev(1, KindAdded, 1, e1), ev(2, KindAdded, 2, e1),
			withEpoch(ev(1, KindAdded, 1, e2), 2)}, remote: 1, prefill: map[string]int{e1: 0, e2: 64}},
		{name: "older epoch is stale", evs: []Event{withEpoch(ev(1, KindAdded, 1, e1), 5), withEpoch(ev(2, KindAdded, 2, e1), 4)},
			remote: 1, prefill: map[string]int{e1: 64}, ignored: "stale", ignoredGrowth: 1},
		{name: "restart without an epoch: seq 1 again", evs: []Event{withEpoch(ev(1, KindAdded, 1, e1), 0), withEpoch(ev(2, KindAdded, 2, e1), 0),
			withEpoch(ev(1, KindAdded, 1, e2), 0)}, remote: 1, prefill: map[string]int{e1: 0, e2: 64}},
		{name: "snapshot then live added: counted once", evs: []Event{snap(ev(1, KindAdded, 1, e1)), ev(7, KindAdded, 1, e1)},
			remote: 1, prefill: map[string]int{e1: 64}},
		{name: "moved by a fallback: freed and added elsewhere", evs: []Event{ev(1, KindAdded, 1, e1), ev(2, KindFreed, 1, ""), ev(3, KindAdded, 1, e2)},
			remote: 1, prefill: map[string]int{e1: 0, e2: 64}},
		{name: "added again elsewhere without freed: counted where it is", evs: []Event{ev(1, KindAdded, 1, e1), snap(ev(1, KindAdded, 1, e2))},
			remote: 1, prefill: map[string]int{e1: 0, e2: 64}},
		{name: "no origin", evs: []Event{from(ev(1, KindAdded, 1, e1), "")}, ignored: "invalid", ignoredGrowth: 1},
		{name: "unknown kinds", evs: []Event{ev(1, 0, 1, e1), ev(2, 99, 1, e1)}, ignored: "invalid", ignoredGrowth: 2},
		{name: "added without endpoint", evs: []Event{ev(1, KindAdded, 1, "")}, ignored: "invalid", ignoredGrowth: 1},
		{name: "endpoint not in the pool", evs: []Event{ev(1, KindAdded, 1, "10.9.9.9:8000"), ev(2, KindAdded, 2, e1)},
			remote: 1, prefill: map[string]int{"10.9.9.9:8000": 0, e1: 64}, ignored: "unknown_endpoint", ignoredGrowth: 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := newFixture(t, "b", func(o *Options) { o.Set = poolOf(t, e1, e2) })
			dup, missed := testutil.ToFloat64(telemetry.ReplicaSyncDuplicate), testutil.ToFloat64(telemetry.ReplicaSyncMissed)
			var ign float64
			if tc.ignored != "" {
				ign = testutil.ToFloat64(telemetry.ReplicaSyncIgnored.WithLabelValues(tc.ignored))
			}
			b.r.Apply("a", tc.evs)
			if got := b.r.RemoteInFlight(); got != tc.remote {
				t.Errorf("remote in flight %d, want %d", got, tc.remote)
			}
			if got := b.active.InFlight(); got != tc.remote {
				t.Errorf("tracker in flight %d, want %d", got, tc.remote)
			}
			for e, want := range tc.prefill {
				if got := b.active.Counts(e).PrefillTokens; got != want {
					t.Errorf("%s prefill %d, want %d", e, got, want)
				}
			}
			if d := testutil.ToFloat64(telemetry.ReplicaSyncDuplicate) - dup; d != tc.dup {
				t.Errorf("duplicates +%v, want +%v", d, tc.dup)
			}
			if d := testutil.ToFloat64(telemetry.ReplicaSyncMissed) - missed; d != tc.missed {
				t.Errorf("missed +%v, want +%v", d, tc.missed)
			}
			if tc.ignored != "" {
				if d := testutil.ToFloat64(telemetry.ReplicaSyncIgnored.WithLabelValues(tc.ignored)) - ign; d != tc.ignoredGrowth {
					t.Errorf("ignored %s +%v, want +%v", tc.ignored, d, tc.ignoredGrowth)
				}
			}
		})
	}
}

// poolOf is a candidate set whose endpoint keys are the given names' keys.
func poolOf(t *testing.T, keys ...string) *endpoints.Set {
	t.Helper()
	s := endpoints.NewSet()
	eps := make([]endpoints.Endpoint, len(keys))
	for i, k := range keys {
		host, port, _ := net.SplitHostPort(k)
		n, _ := strconv.Atoi(port)
		eps[i] = endpoints.Endpoint{Address: host, Port: n}
	}
	if err := s.Replace(eps); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestExpirePeerFreesItsWorkAndAllowsRejoin(t *testing.T) {
	b := newFixture(t, "b", nil)
	b.r.Apply("pod-a", []Event{ev(10, KindAdded, 1, "e1"), ev(11, KindAdded, 2, "e2"), ev(12, KindPrefillDone, 2, "")})
	b.r.Apply("pod-c", []Event{from(ev(1, KindAdded, 1, "e1"), "c")})
	b.r.ExpirePeer("pod-a")
	if got := b.active.Counts("e1").Requests + b.active.Counts("e2").Requests; got != 1 {
		t.Fatalf("after the peer left %d requests counted, want 1 (c's)", got)
	}
	// It rejoins: a snapshot and a live stream whose numbers restart lower
	// than before are applied, as for a new peer.
	b.r.Apply("pod-a", []Event{ev(0, KindAdded, 3, "e2"), ev(4, KindAdded, 4, "e2")})
	if got := b.active.Counts("e2").Requests; got != 2 {
		t.Fatalf("after rejoin e2 counts %d requests, want 2", got)
	}
}

func TestTickExpiresOrphansBothWays(t *testing.T) {
	b := newFixture(t, "b", func(o *Options) { o.Sync.OrphanTTL.Duration = time.Minute })
	b.r.Apply("a", []Event{ev(1, KindAdded, 1, "e1"), ev(2, KindAdded, 2, "e1")})
	b.r.Added(1, "e2", work(32), nil) // b's own request, whose end the router never reports
	b.r.Flush(&capture{})
	b.clk.add(45 * time.Second)
	b.r.Apply("a", []Event{ev(3, KindPrefillDone, 2, "")}) // request 2 is alive
	b.clk.add(30 * time.Second)
	b.r.Tick(b.clk.Now())
	if got := b.r.RemoteInFlight(); got != 1 {
		t.Fatalf("after the orphan TTL %d peers' requests counted, want 1 (the one with a recent event)", got)
	}
	var c capture
	b.r.Flush(&c)
	if len(c.evs) != 1 || c.evs[0].Kind != KindFreed || c.evs[0].Request != 1 {
		t.Fatalf("own orphan not ended towards peers: %+v", c.evs)
	}
	if s := b.r.Snapshot(); len(s) != 0 {
		t.Fatalf("snapshot still holds the ended request: %+v", s)
	}
	b.clk.add(2 * time.Minute) // a silent origin with nothing in flight is forgotten
	b.r.Tick(b.clk.Now())
	if b.r.RemoteInFlight() != 0 || len(b.r.origins) != 0 {
		t.Fatalf("after a silent orphan TTL: %d requests, %d origins kept", b.r.RemoteInFlight(), len(b.r.origins))
	}
	if g := testutil.ToFloat64(telemetry.ReplicaSyncPeers); g != 0 {
		t.Fatalf("peers gauge %v after every origin was forgotten", g)
	}
}

// TestSnapshotRebuildsAPeersView: a joining replica applies A's snapshot and
// then counts what A has in flight, with A's recent predicted prefixes.
func TestSnapshotRebuildsAPeersView(t *testing.T) {
	a := newFixture(t, "a", func(o *Options) { o.PredictedTTL = time.Minute })
	a.r.Added(1, "e1", work(64, 1, 2, 3, 4), []uint64{4}) // recorded 2 minutes ago: beyond the TTL
	a.clk.add(2 * time.Minute)
	a.r.Added(2, "e1", work(64, 1, 2, 3, 4), []uint64{4})
	a.r.Added(3, "e2", work(32, 5, 6), []uint64{6})
	a.r.Added(4, "e2", work(48, 7, 8, 9), []uint64{9})
	a.r.PrefillDone(3)
	a.r.Freed(4)
	s := a.r.Snapshot()
	kinds := map[Kind]int{}
	for _, e := range s {
		if e.Seq != 0 || e.Origin != "a" {
			t.Fatalf("snapshot event %+v: want Seq 0 and origin a", e)
		}
		kinds[e.Kind]++
	}
	if kinds[KindPredicted] != 3 || kinds[KindAdded] != 3 || kinds[KindPrefillDone] != 1 {
		t.Fatalf("snapshot kinds %v: want 3 predicted (within TTL), 3 added, 1 prefill done", kinds)
	}
	b := newFixture(t, "b", func(o *Options) { o.PredictedTTL = time.Minute })
	b.clk.add(2 * time.Minute)
	b.r.Apply("a", s)
	b.r.Apply("a", s) // twice: state, not steps
	if c := b.active.Counts("e1"); c.Requests != 2 || c.PrefillTokens != 128 {
		t.Errorf("e1 on the joiner: %+v, want 2 requests, 128 prefill tokens", c)
	}
	if c := b.active.Counts("e2"); c.Requests != 1 || c.PrefillTokens != 0 {
		t.Errorf("e2 on the joiner: %+v, want 1 request past its prefill", c)
	}
	if m := b.index.Match([]uint64{9}, b.clk.Now(), nil); len(m) != 1 || m[0].Endpoint != "e2" {
		t.Errorf("joiner's predicted index for a finished request's prefix: %+v", m)
	}
}

func TestSnapshotChainsBounded(t *testing.T) {
	a := newFixture(t, "a", func(o *Options) { o.Sync.SnapshotChains = 2 })
	for i := range uint64(5) {
		a.r.Added(i+1, "e1", work(16, i+10), []uint64{i + 10})
		a.r.Freed(i + 1)
	}
	s := a.r.Snapshot()
	if len(s) != 2 || s[0].IndexChain[0] != 13 || s[1].IndexChain[0] != 14 {
		t.Fatalf("snapshot %+v: want the 2 most recent prefixes, oldest first", s)
	}
}

// A batch is one change: the router hears of it once, after the whole batch
// applied, so a freed followed by an added on the same endpoint never shows
// it room that the batch itself refilled.
func TestApplyNotifiesOncePerBatch(t *testing.T) {
	var seen []int // e1's prefill tokens at each notification
	var active *activework.Tracker
	active = activework.New(time.Hour, func() { seen = append(seen, active.Counts(e1).PrefillTokens) })
	f := newFixture(t, "b", func(o *Options) { o.Active = active })
	f.r.Apply("a", []Event{ev(1, KindAdded, 1, e1)})
	if len(seen) != 0 {
		t.Fatalf("an added alone notified: %v", seen)
	}
	f.r.Apply("a", []Event{ev(2, KindFreed, 1, ""), ev(3, KindAdded, 2, e1), ev(4, KindPrefillDone, 2, ""), ev(5, KindAdded, 3, e1)})
	if len(seen) != 1 || seen[0] != 64 {
		t.Fatalf("notifications saw e1's prefill %v, want once, after the batch (64: request 3's)", seen)
	}
	f.r.ExpirePeer("a")
	if len(seen) != 2 || seen[1] != 0 {
		t.Fatalf("expiring the peer: notifications saw %v, want one more, after all was freed (0)", seen)
	}
}

func TestApplyObservesLag(t *testing.T) {
	lag := func() (n uint64, sum float64) {
		var m dto.Metric
		if err := telemetry.ReplicaSyncLag.Write(&m); err != nil {
			t.Fatal(err)
		}
		return m.Histogram.GetSampleCount(), m.Histogram.GetSampleSum()
	}
	f := newFixture(t, "b", nil)
	f.clk.add(3 * time.Millisecond) // the events below were sent at t0
	for _, tt := range []struct {
		name  string
		batch []Event
		want  float64 // seconds observed; <0: nothing
	}{
		{"a waiting event carries its enqueue time, not when it was sent", []Event{{Origin: "a", Epoch: 1, Seq: 1, Kind: KindWaiting, Request: 9, At: t0.Add(-time.Hour), Model: "m"}}, -1},
		{"one value per batch: its first timed event's age", []Event{ev(2, KindAdded, 1, e1), ev(3, KindFreed, 1, "")}, 0.003},
		{"a clock ahead of this one counts as no delay", []Event{func() Event { e := ev(4, KindAdded, 2, e1); e.At = t0.Add(time.Second); return e }()}, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			n0, s0 := lag()
			f.r.Apply("a", tt.batch)
			n1, s1 := lag()
			switch {
			case tt.want < 0 && n1 != n0:
				t.Fatalf("observed %d values, want none", n1-n0)
			case tt.want >= 0 && (n1 != n0+1 || math.Abs(s1-s0-tt.want) > 1e-9):
				t.Fatalf("observed %d values summing %vs, want one of %vs", n1-n0, s1-s0, tt.want)
			}
		})
	}
}

// TestRefusedTakesBackAPeersPrefix: a peer's request its endpoint refused
// takes back the predicted prefix its added recorded here, keeping what
// another request holds; the freed that follows frees its work.
func TestRefusedTakesBackAPeersPrefix(t *testing.T) {
	withChain := func(e Event, chain ...uint64) Event { e.IndexChain = chain; return e }
	b := newFixture(t, "b", func(o *Options) { o.Set = poolOf(t, e1, e2) })
	b.r.Apply("a", []Event{
		withChain(ev(1, KindAdded, 1, e1), 101, 102),           // a request that holds the prefix
		withChain(ev(2, KindAdded, 2, e1), 101, 102, 103, 104), // the refused one, on the same prefix
	})
	held := func() int {
		for _, o := range b.index.Match([]uint64{101, 102, 103, 104}, t0, nil) {
			if o.Endpoint == e1 {
				return o.Blocks
			}
		}
		return 0
	}
	if got := held(); got != 4 {
		t.Fatalf("before the refusal %d blocks predicted, want 4", got)
	}
	b.r.Apply("a", []Event{ev(3, KindRefused, 2, "")})
	if got := held(); got != 2 {
		t.Fatalf("after the refusal %d blocks predicted, want the 2 request 1 holds", got)
	}
	if got := b.r.RemoteInFlight(); got != 2 {
		t.Fatalf("refused alone freed work: %d in flight, want 2", got)
	}
	b.r.Apply("a", []Event{ev(4, KindFreed, 2, ""), ev(5, KindRefused, 9, "")})
	if got := b.r.RemoteInFlight(); got != 1 {
		t.Fatalf("%d in flight after freed, want 1", got)
	}
}

// TestBridgeClaimsEndAtTheFirstToken: on an endpoint whose chains are bridge
// claims (SetBridges: the events path with kv.eventsBridge), a peer's prefix
// counts until that request's first token or end, and a snapshot does not
// carry it; elsewhere it stays a prediction.
func TestBridgeClaimsEndAtTheFirstToken(t *testing.T) {
	withChain := func(e Event, chain ...uint64) Event { e.IndexChain = chain; return e }
	b := newFixture(t, "b", func(o *Options) { o.Set = poolOf(t, e1, e2) })
	b.r.SetBridges(func(ep string) bool { return ep == e1 })
	held := func(ep string) int {
		for _, o := range b.index.Match([]uint64{101, 102, 103}, t0, nil) {
			if o.Endpoint == ep {
				return o.Blocks
			}
		}
		return 0
	}
	b.r.Apply("a", []Event{
		withChain(ev(1, KindAdded, 1, e1), 101, 102, 103),
		withChain(ev(2, KindAdded, 2, e1), 101, 102),
		withChain(ev(3, KindAdded, 3, e2), 101, 102, 103), // a predicted-path endpoint
	})
	if held(e1) != 3 || held(e2) != 3 {
		t.Fatalf("after the adds: e1 %d, e2 %d blocks, want 3 and 3", held(e1), held(e2))
	}
	b.r.Apply("a", []Event{ev(4, KindPrefillDone, 1, "")})
	if got := held(e1); got != 2 {
		t.Fatalf("after request 1's first token e1 holds %d blocks, want request 2's 2", got)
	}
	b.r.Apply("a", []Event{ev(5, KindFreed, 2, ""), ev(6, KindPrefillDone, 3, "")})
	if held(e1) != 0 || held(e2) != 3 {
		t.Fatalf("after request 2 ended and 3's first token: e1 %d, e2 %d blocks, want 0 and 3", held(e1), held(e2))
	}
	b.r.Added(7, e1, work(48, 201, 202, 203), []uint64{201, 202, 203})
	b.r.Added(8, e2, work(48, 301, 302, 303), []uint64{301, 302, 303})
	var chains int
	for _, e := range b.r.Snapshot() {
		if len(e.IndexChain) > 0 && e.Kind == KindPredicted {
			chains++
			if e.Endpoint != e2 {
				t.Errorf("a snapshot carries a bridge claim on %s", e.Endpoint)
			}
		}
	}
	if chains != 1 {
		t.Errorf("snapshot carries %d predicted chains, want e2's one", chains)
	}
}

package fleetsim

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/kvpick/kvpick/pkg/activework"
	"github.com/kvpick/kvpick/pkg/replicasync"
	"github.com/kvpick/kvpick/pkg/telemetry"
)

// TestReplicaSyncKeepsOneReplicasRouting: three kvpick replicas behind a
// round-robin gateway route as well as one when they sync, and worse when
// they do not (each spreads a shared prefix on its own).
func TestReplicaSyncKeepsOneReplicasRouting(t *testing.T) {
	cfg, w, err := prefixFleet()
	if err != nil {
		t.Fatal(err)
	}
	specs, err := Standard([]string{PolicyKV}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	kv := specs[0]
	runs := []Spec{kv, Replicas(kv, ReplicaOptions{N: 3}), Replicas(kv, ReplicaOptions{N: 3, Sync: true, Delay: 5 * time.Millisecond})}
	res, err := RunAll(cfg, w, runs, 2)
	if err != nil {
		t.Fatal(err)
	}
	one, apart, synced := res[0].Summary, res[1].Summary, res[2].Summary
	for _, r := range res {
		if len(r.Violations) > 0 || r.Summary.Completed != len(w.Requests) {
			t.Fatalf("completed %d of %d, violations %v", r.Summary.Completed, len(w.Requests), r.Violations)
		}
	}
	t.Logf("hit / p95: one %.3f / %.3fs, three apart %.3f / %.3fs, three synced %.3f / %.3fs",
		one.PrefixHit, one.TTFTP95, apart.PrefixHit, apart.TTFTP95, synced.PrefixHit, synced.TTFTP95)
	if synced.PrefixHit < 0.95*one.PrefixHit {
		t.Errorf("synced replicas hit %.3f, more than 5%% below one replica's %.3f", synced.PrefixHit, one.PrefixHit)
	}
	if apart.PrefixHit >= synced.PrefixHit-0.02 {
		t.Errorf("unsynced replicas hit %.3f, not below synced %.3f: the comparison shows nothing", apart.PrefixHit, synced.PrefixHit)
	}
}

// TestSyncedReplicasEndAtZero: after a run and the last events' delay,
// every replica counts no work in flight, its own or its peers'.
func TestSyncedReplicasEndAtZero(t *testing.T) {
	cfg, w, err := prefixFleet()
	if err != nil {
		t.Fatal(err)
	}
	w.Requests = w.Requests[:120]
	specs, err := Standard([]string{PolicyKV}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	delay := 20 * time.Millisecond
	s, err := newSim(cfg, w, Replicas(specs[0], ReplicaOptions{N: 3, Sync: true, Delay: delay}))
	if err != nil {
		t.Fatal(err)
	}
	applied := testutil.ToFloat64(telemetry.ReplicaSyncApplied.WithLabelValues("freed"))
	if err := s.run(); err != nil {
		t.Fatal(err)
	}
	if n := testutil.ToFloat64(telemetry.ReplicaSyncApplied.WithLabelValues("freed")) - applied; n < 2*float64(len(w.Requests)) {
		t.Fatalf("%v peers' Freed applied, want 2 per request (%d requests, 3 replicas)", n, len(w.Requests))
	}
	rp := s.pol.(*replicated)
	s.now += delay // what is still in transit arrives
	rp.deliver()
	for i, p := range rp.pols {
		if n := p.(*kvpick).active.InFlight(); n != 0 {
			t.Errorf("replica %d counts %d requests in flight after the run", i, n)
		}
	}
}

func TestReplicasSyncNeedsKVPickPolicies(t *testing.T) {
	cfg, w, err := prefixFleet()
	if err != nil {
		t.Fatal(err)
	}
	specs, err := Standard([]string{PolicyGAIE}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Run(cfg, w, Replicas(specs[0], ReplicaOptions{N: 2, Sync: true})); err == nil {
		t.Fatal("a policy that cannot sync ran as synced replicas")
	}
}

type workPolicy struct {
	Policy
	work int
}

func (w workPolicy) PrefillWork(Pending) int { return w.work }

type plainPolicy struct{ Policy }

// TestReplicatedQueueKeyComesFromItsReplica: the replicas' shared admission
// queue orders by the wspt key of the replica that prepared each request
// (it ran first come first served before: the wrapper hid the key).
func TestReplicatedQueueKeyComesFromItsReplica(t *testing.T) {
	var r prefillWorker = &replicated{pols: []Policy{workPolicy{work: 7}, plainPolicy{}}}
	if got := r.PrefillWork(replicaPending{i: 0}); got != 7 {
		t.Fatalf("replica 0's key %d, want 7", got)
	}
	if got := r.PrefillWork(replicaPending{i: 1}); got != 0 {
		t.Fatalf("a policy without a key gave %d, want 0", got)
	}
}

// TestSyncBusJitterKeepsSendersOrder: with jitter, batches arrive after the
// delay plus up to the jitter, each sender's in the order sent (a stream
// keeps it), and the bus's queue stays in due order across senders.
func TestSyncBusJitterKeepsSendersOrder(t *testing.T) {
	now := time.Unix(0, 0)
	b := &syncBus{delay: time.Millisecond, jitter: 5 * time.Millisecond, now: func() time.Time { return now },
		rng: newBusRand(7)}
	sent := map[int][]time.Time{}
	for i := range 200 {
		from := i % 3
		busSender{b, from}.Broadcast(nil)
		sent[from] = append(sent[from], now)
		now = now.Add(300 * time.Microsecond)
	}
	last := map[int]time.Time{}
	seen := map[int]int{}
	spread := false
	for i, tr := range b.queue {
		if i > 0 && tr.due.Before(b.queue[i-1].due) {
			t.Fatalf("queue out of due order at %d", i)
		}
		at := sent[tr.from][seen[tr.from]]
		seen[tr.from]++
		if d := tr.due.Sub(at); d < b.delay {
			t.Fatalf("batch %d due %v after it was sent, under the delay", i, d)
		} else if d > b.delay+b.jitter { // holding order never pushes past: the sender's previous batch was due earlier
			t.Fatalf("batch %d due %v after it was sent, past delay and jitter", i, d)
		} else if d != b.delay {
			spread = true
		}
		if tr.due.Before(last[tr.from]) {
			t.Fatalf("sender %d's batches reordered", tr.from)
		}
		last[tr.from] = tr.due
	}
	if !spread {
		t.Fatal("no batch was delayed past the fixed delay: the jitter did nothing")
	}
}

// TestBusAppliesAtDueTime: a batch delivered later than due (delivery waits
// for the next call into the policy) is recorded at its due time, so a
// receiver measures the sync delay as its apply lag, not the gap between
// calls.
func TestBusAppliesAtDueTime(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now := t0
	b := &syncBus{delay: 20 * time.Millisecond, now: func() time.Time { return now }}
	for _, id := range []string{"r0", "r1"} {
		r, err := replicasync.New(replicasync.Options{ID: id, Active: activework.New(time.Hour, nil), Now: b.clock(func() time.Time { return now })})
		if err != nil {
			t.Fatal(err)
		}
		b.join(r)
	}
	b.reps[0].Added(1, "e1", activework.Work{PromptTokens: 64, UncachedTokens: 64, BlockSize: 16}, nil)
	b.flush(0)
	now = now.Add(70 * time.Millisecond) // the next call into the policy
	b.deliver()
	if got := b.reps[1].RemoteInFlight(); got != 1 {
		t.Fatalf("receiver counts %d peer requests, want 1", got)
	}
	if got := b.reps[1].QueueSlack(); got != 20*time.Millisecond {
		t.Fatalf("receiver's slack %v: its lag was measured at %v, not at the 20ms due time", got, now.Sub(t0))
	}
}

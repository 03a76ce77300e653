package replicasync

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/kvpick/kvpick/pkg/telemetry"
)

func TestNewRequiresIDAndTracker(t *testing.T) {
	if _, err := New(Options{Active: newFixture(t, "x", nil).active}); err == nil {
		t.Fatal("no ID accepted")
	}
	if _, err := New(Options{ID: "x"}); err == nil {
		t.Fatal("no tracker accepted")
	}
}

func TestRecorderNumbersItsEventsInOrder(t *testing.T) {
	f := newFixture(t, "a", nil)
	f.r.Added(7, "e1", work(64, 1, 2, 3, 4), []uint64{4})
	f.r.PrefillDone(7)
	f.r.PrefillDone(99) // unknown: nothing to say
	f.r.Freed(7)
	f.r.Freed(7) // twice: once is enough
	var c capture
	f.r.Flush(&c)
	want := []Kind{KindAdded, KindPrefillDone, KindFreed}
	if len(c.evs) != len(want) {
		t.Fatalf("sent %d events, want %d: %+v", len(c.evs), len(want), c.evs)
	}
	for i, e := range c.evs {
		if e.Kind != want[i] || e.Seq != uint64(i+1) || e.Origin != "a" || e.Epoch != uint64(t0.UnixNano()) || e.Request != 7 {
			t.Errorf("event %d = %+v, want kind %v seq %d", i, e, want[i], i+1)
		}
	}
	if c.evs[0].Endpoint != "e1" || c.evs[0].Work.PromptTokens != 64 || len(c.evs[0].IndexChain) != 1 {
		t.Errorf("added carries %+v", c.evs[0])
	}
}

func TestFullQueueDropsWithoutWaiting(t *testing.T) {
	f := newFixture(t, "a", func(o *Options) { o.Sync.QueueLength = 2 })
	dropped := testutil.ToFloat64(telemetry.ReplicaSyncDropped.WithLabelValues("queue_full"))
	for i := range uint64(5) {
		f.r.Added(i+1, "e1", work(16), nil) // would block forever if emit waited
	}
	if d := testutil.ToFloat64(telemetry.ReplicaSyncDropped.WithLabelValues("queue_full")) - dropped; d != 3 {
		t.Fatalf("dropped %v, want 3", d)
	}
	var c capture
	f.r.Flush(&c)
	if len(c.evs) != 2 || c.evs[1].Seq != 2 {
		t.Fatalf("sent %+v, want seq 1 and 2", c.evs)
	}
	f.r.Freed(5) // seq 6: a peer sees 3..5 missing
	f.r.Flush(&c)
	if c.evs[2].Seq != 6 {
		t.Fatalf("after drops seq %d, want 6 (dropped events keep their numbers)", c.evs[2].Seq)
	}
}

func TestFlushBatchesAtMaxBatch(t *testing.T) {
	f := newFixture(t, "a", func(o *Options) { o.Sync.MaxBatch = 3 })
	for i := range uint64(7) {
		f.r.Added(i+1, "e1", work(16), nil)
	}
	var sizes []int
	f.r.Flush(transportFunc(func(evs []Event) { sizes = append(sizes, len(evs)) }))
	if len(sizes) != 3 || sizes[0] != 3 || sizes[1] != 3 || sizes[2] != 1 {
		t.Fatalf("batches %v, want [3 3 1]", sizes)
	}
}

type transportFunc func([]Event)

func (f transportFunc) Broadcast(evs []Event) { f(evs) }

// TestRunCarriesEventsToAPeer: two replicas, A's Run goroutine feeding B's
// Apply, as the network transport does; B counts A's work and frees it.
func TestRunCarriesEventsToAPeer(t *testing.T) {
	a, b := newFixture(t, "a", nil), newFixture(t, "b", nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { a.r.Run(ctx, transportFunc(func(evs []Event) { b.r.Apply("a", evs) })); close(done) }()
	defer func() { cancel(); <-done }()
	a.r.Added(1, "e1", work(64, 1, 2, 3, 4), []uint64{2, 4})
	waitFor(t, func() bool { return b.active.Counts("e1").Requests == 1 })
	if got := b.active.Counts("e1").PrefillTokens; got != 64 {
		t.Fatalf("peer counts %d prefill tokens, want 64", got)
	}
	if m := b.index.Match([]uint64{2, 4}, b.clk.Now(), nil); len(m) != 1 || m[0].Endpoint != "e1" || m[0].Blocks != 2 {
		t.Fatalf("peer's predicted index: %+v", m)
	}
	a.r.Freed(1)
	waitFor(t, func() bool { return b.active.Counts("e1").Requests == 0 })
}

// waitFor polls cond for up to 5 s (a bounded wait on another goroutine).
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatal("condition not met within 5s")
}

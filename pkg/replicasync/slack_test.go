package replicasync

import (
	"testing"
	"time"

	promtest "github.com/prometheus/client_golang/prometheus/testutil"

	v1 "github.com/kvpick/kvpick/api/v1alpha1"
	"github.com/kvpick/kvpick/pkg/admission"
	"github.com/kvpick/kvpick/pkg/telemetry"
)

// TestQueueSlackFollowsLag: the slack in force is the worst apply lag of the
// last one to two seconds, at least queueSlack (5ms), and past queueSlackMax
// (50ms) the shared order is suspended; waits and snapshots do not count as
// lag.
func TestQueueSlackFollowsLag(t *testing.T) {
	type step struct {
		wait  time.Duration // clock advance before the batch
		age   time.Duration // how old the batch's event is when applied
		kind  Kind
		state bool          // a snapshot's event (Seq 0)
		slack time.Duration // the slack in force after it
	}
	ms := time.Millisecond
	cases := []struct {
		name     string
		min, max time.Duration
		steps    []step
	}{
		{"a fast link keeps the floor", 0, 0, []step{{0, ms, KindAdded, false, 5 * ms}}},
		{"a slow batch widens it", 0, 0, []step{{0, 2 * ms, KindAdded, false, 5 * ms}, {10 * ms, 20 * ms, KindFreed, false, 20 * ms}}},
		{"past queueSlackMax: suspended", 0, 0, []step{{0, 80 * ms, KindAdded, false, 80 * ms}}},
		{"a wait carries its enqueue time: not lag", 0, 0, []step{{0, time.Second, KindWaiting, false, 5 * ms}}},
		{"a snapshot carries its state's time: not lag", 0, 0, []step{{0, time.Second, KindAdded, true, 5 * ms}}},
		{"the previous window still counts", 0, 0, []step{{0, 30 * ms, KindAdded, false, 30 * ms}, {1500 * ms, ms, KindFreed, false, 30 * ms}}},
		{"two windows later it is forgotten", 0, 0, []step{{0, 30 * ms, KindAdded, false, 30 * ms}, {1500 * ms, ms, KindFreed, false, 30 * ms},
			{1100 * ms, ms, KindFreed, false, 5 * ms}}},
		{"after a quiet link it is forgotten at once", 0, 0, []step{{0, 30 * ms, KindAdded, false, 30 * ms}, {2500 * ms, ms, KindFreed, false, 5 * ms}}},
		{"queueSlackMax below queueSlack: fixed, never suspended", 8 * ms, 2 * ms, []step{{0, 40 * ms, KindAdded, false, 8 * ms}}},
		{"a raised floor", 20 * ms, 0, []step{{0, 10 * ms, KindAdded, false, 20 * ms}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, "b", func(o *Options) {
				o.Sync.QueueSlack, o.Sync.QueueSlackMax = v1.Duration{Duration: tc.min}, v1.Duration{Duration: tc.max}
			})
			if g := promtest.ToFloat64(telemetry.ReplicaSyncQueueSlack); g != max(tc.min, 5*ms).Seconds() {
				t.Fatalf("gauge at start %v, want the floor", g)
			}
			var seq uint64
			for i, s := range tc.steps {
				f.clk.add(s.wait)
				e := ev(0, s.kind, uint64(i+1), e1)
				if !s.state {
					seq++
					e.Seq = seq
				}
				e.At = f.clk.Now().Add(-s.age)
				f.r.Apply("a", []Event{e})
				if got := f.r.QueueSlack(); got != s.slack {
					t.Fatalf("step %d: slack %v, want %v", i, got, s.slack)
				}
				if g := promtest.ToFloat64(telemetry.ReplicaSyncQueueSlack); g != s.slack.Seconds() {
					t.Fatalf("step %d: gauge %v, want %v", i, g, s.slack.Seconds())
				}
				if want := s.slack > max(tc.max, tc.min, 50*ms); f.r.suspends(f.r.QueueSlack()) != want {
					t.Fatalf("step %d: suspended %v, want %v", i, !want, want)
				}
			}
		})
	}
}

// TestAheadUsesTheSlackInForce: a peer's wait 20ms older holds this
// replica's request at the 5ms floor, and no longer once the link shows
// 30ms of lag (that peer's request may have left 30ms ago); a smaller
// class still does, until a lag past queueSlackMax suspends the order.
func TestAheadUsesTheSlackInForce(t *testing.T) {
	f := newFixture(t, "b", nil)
	f.r.Apply("a", []Event{waitEv(1, 1, "m", 20, 30)})
	mine := admission.Rank{Class: 20, Enqueued: t0.Add(50 * time.Millisecond)}
	if !f.r.Ahead("m", "", false, mine, admission.Aging{}) {
		t.Fatal("at the 5ms floor a wait 20ms older does not hold")
	}
	late := ev(2, KindAdded, 2, e1)
	late.At = f.clk.Now().Add(-30 * time.Millisecond)
	f.r.Apply("a", []Event{late})
	if f.r.Ahead("m", "", false, mine, admission.Aging{}) {
		t.Fatalf("with 30ms of lag (slack %v) a wait 20ms older still holds", f.r.QueueSlack())
	}
	f.r.Apply("a", []Event{waitEv(3, 3, "m", 19, 45)})
	if !f.r.Ahead("m", "", false, mine, admission.Aging{}) {
		t.Fatal("a smaller class waiting does not hold")
	}
	slow := ev(4, KindFreed, 2, "")
	slow.At = f.clk.Now().Add(-60 * time.Millisecond)
	f.r.Apply("a", []Event{slow})
	if f.r.Ahead("m", "", false, mine, admission.Aging{}) {
		t.Fatalf("with 60ms of lag, past queueSlackMax, a peer's wait still holds (slack %v)", f.r.QueueSlack())
	}
}

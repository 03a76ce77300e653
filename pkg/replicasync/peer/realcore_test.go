package peer

import (
	"context"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/kvpick/kvpick/pkg/activework"
	"github.com/kvpick/kvpick/pkg/admission"
	"github.com/kvpick/kvpick/pkg/replicasync"
	"github.com/kvpick/kvpick/pkg/telemetry"
)

func realReplica(t *testing.T, id string) (*replicasync.Replica, *activework.Tracker) {
	t.Helper()
	active := activework.New(time.Minute, func() {})
	r, err := replicasync.New(replicasync.Options{ID: id, Active: active, Log: logr.Discard()})
	if err != nil {
		t.Fatal(err)
	}
	return r, active
}

// With the real core on both ends: a wrong secret's snapshot changes no
// active work; the right one's is counted once, under the sender's id.
func TestRealCoreAppliesOnlyAuthenticatedPeers(t *testing.T) {
	recv, active := realReplica(t, "a")
	srv := startReceiverCore(t, "a", recv, Auth{Secret: secret}, nil, "")
	send, _ := realReplica(t, "b")
	send.Added(1, "10.0.0.1:8000", activework.Work{PromptTokens: 64, UncachedTokens: 64, BlockSize: 16, Blocks: []uint64{1, 2, 3, 4}}, nil)

	before := testutil.ToFloat64(telemetry.PeerRejected.WithLabelValues("unauthenticated"))
	startSender(t, "b", send, []byte("wrong"), nil, srv.addr)
	eventually(t, "refusals", func() bool {
		return testutil.ToFloat64(telemetry.PeerRejected.WithLabelValues("unauthenticated")) >= before+2 || recv.RemoteInFlight() > 0
	})
	if n := recv.RemoteInFlight(); n != 0 || active.Counts("10.0.0.1:8000").Requests != 0 {
		t.Fatalf("a wrong-secret peer's work was counted: %d requests", n)
	}
	startSender(t, "b", send, secret, nil, srv.addr)
	eventually(t, "the authenticated snapshot", func() bool { return recv.RemoteInFlight() == 1 })
	if got := active.Counts("10.0.0.1:8000").Requests; got != 1 {
		t.Fatalf("active requests %d, want 1", got)
	}
}

// The queue order travels over a real stream: a request waiting at the
// sender (in its snapshot, then live) holds the receiver's later requests of
// the model back until it leaves, and the receiver hears it leave.
func TestRealCoreSharesQueueOrder(t *testing.T) {
	recv, _ := realReplica(t, "a")
	srv := startReceiverCore(t, "a", recv, Auth{Secret: secret}, nil, "")
	send, _ := realReplica(t, "b")
	at := time.Now()
	send.Waiting(1, "m", "", admission.Rank{Class: 10, Enqueued: at}) // in the snapshot
	tr, _ := startSender(t, "b", send, secret, nil, srv.addr)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { send.Run(ctx, tr); close(done) }() // the live events
	t.Cleanup(func() { cancel(); <-done })
	mine := admission.Rank{Class: 12, Enqueued: at}
	eventually(t, "the snapshot's wait", func() bool { return recv.Ahead("m", "", false, mine, admission.Aging{}) })
	send.Waiting(2, "m", "", admission.Rank{Class: 11, Enqueued: at}) // live
	send.Left(1)
	// Only request 2 (class 11) waits once Left(1) is applied: a class-11
	// request queued earlier goes first, a class-12 one still gives way.
	eventually(t, "the live wait replacing the snapshot's", func() bool {
		return recv.PeersWaiting() == 1 && !recv.Ahead("m", "", false, admission.Rank{Class: 11, Enqueued: at.Add(-time.Second)}, admission.Aging{})
	})
	if !recv.Ahead("m", "", false, mine, admission.Aging{}) {
		t.Fatal("the receiver's order lost the sender's live wait")
	}
	send.Added(2, "10.0.0.1:8000", activework.Work{PromptTokens: 64, UncachedTokens: 64, BlockSize: 16}, nil)
	eventually(t, "routed: no wait left", func() bool { return !recv.Ahead("m", "", false, mine, admission.Aging{}) && recv.RemoteInFlight() == 1 })
}

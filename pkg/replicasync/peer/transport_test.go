package peer

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/kvpick/kvpick/pkg/replicasync"
	"github.com/kvpick/kvpick/pkg/telemetry"
)

// A sender's snapshot arrives first, then its live events, applied under
// its own replica id.
func TestSnapshotThenLiveEvents(t *testing.T) {
	r := startReceiver(t, "a", Auth{Secret: secret}, nil, "")
	tr, _ := startSender(t, "b", newFakeCore(added("b", 1, 10), added("b", 2, 11)), secret, nil, r.addr)
	eventually(t, "snapshot applied", func() bool { return slices.Equal(r.core.requests("b"), []uint64{10, 11}) })
	tr.Broadcast([]replicasync.Event{{Origin: "b", Seq: 3, Kind: replicasync.KindFreed, Request: 10}})
	eventually(t, "live event applied", func() bool { return slices.Equal(r.core.requests("b"), []uint64{10, 11, 10}) })
	if got := r.core.expiries("b"); got != 1 {
		t.Fatalf("snapshot reset the peer %d times, want once", got)
	}
	if up := tr.Peers(); !up[r.addr] {
		t.Fatalf("peer not reported up: %v", up)
	}
}

// Nobody without the secret (or with a wrong one) gets an event applied.
func TestUnauthenticatedPeerNotApplied(t *testing.T) {
	tests := []struct {
		name   string
		secret []byte
	}{
		{"no secret", nil},
		{"wrong secret", []byte("guess")},
		{"secret with a suffix", append(append([]byte{}, secret...), 'x')},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := startReceiver(t, "a", Auth{Secret: secret}, nil, "")
			before := testutil.ToFloat64(telemetry.PeerRejected.WithLabelValues("unauthenticated"))
			tr, _ := startSender(t, "intruder", newFakeCore(added("intruder", 1, 99)), tc.secret, nil, r.addr)
			tr.Broadcast([]replicasync.Event{added("intruder", 2, 100)})
			eventually(t, "two refusals or an applied event", func() bool {
				return testutil.ToFloat64(telemetry.PeerRejected.WithLabelValues("unauthenticated")) >= before+2 ||
					len(r.core.requests("intruder")) > 0
			})
			if ids := r.core.requests("intruder"); len(ids) > 0 || r.core.expiries("intruder") > 0 {
				t.Fatalf("an unauthenticated peer changed state: held %v", ids)
			}
			if tr.Peers()[r.addr] {
				t.Fatal("sender reports the refused stream as up")
			}
		})
	}
}

// A peer list holding this replica's own address skips it.
func TestOwnAddressIsSkipped(t *testing.T) {
	r := startReceiver(t, "a", Auth{Secret: secret}, nil, "")
	tr, _ := startSender(t, "a", newFakeCore(added("a", 1, 1)), secret, nil, r.addr)
	eventually(t, "self detected", func() bool { return len(tr.Peers()) == 0 })
	tr.Broadcast([]replicasync.Event{added("a", 2, 2)}) // must not block or queue
	if ids := r.core.requests("a"); len(ids) > 0 {
		t.Fatalf("own events applied to itself: %v", ids)
	}
}

// Events claiming another origin than the authenticated stream's are dropped.
func TestForeignOriginDropped(t *testing.T) {
	r := startReceiver(t, "a", Auth{Secret: secret}, nil, "")
	startSender(t, "b", newFakeCore(added("b", 1, 1), added("c", 1, 2)), secret, nil, r.addr)
	eventually(t, "own event applied", func() bool { return len(r.core.requests("b")) == 1 })
	if ids := r.core.requests("c"); len(ids) > 0 {
		t.Fatalf("b injected events as c: %v", ids)
	}
}

// A sender that goes away is expired after the bound; one that comes back
// in time is not, and resyncs with a snapshot.
func TestExpiryAndResync(t *testing.T) {
	r := startReceiver(t, "a", Auth{Secret: secret}, nil, "")
	core := newFakeCore(added("b", 1, 1))
	_, stop := startSender(t, "b", core, secret, nil, r.addr)
	eventually(t, "snapshot", func() bool { return len(r.core.requests("b")) == 1 })
	stop()
	start := time.Now()
	eventually(t, "expiry", func() bool { return r.core.expiries("b") == 2 }) // snapshot reset + expiry
	if d := time.Since(start); d < expiry/2 {
		t.Fatalf("expired after %s, before the %s bound", d, expiry)
	}
	core.snap = []replicasync.Event{added("b", 5, 7)}
	startSender(t, "b", core, secret, nil, r.addr)
	eventually(t, "resync", func() bool { return slices.Equal(r.core.requests("b"), []uint64{7}) })
}

// The receiver restarting on the same address: the sender redials and
// resends its snapshot.
func TestReconnectAfterReceiverRestart(t *testing.T) {
	r := startReceiver(t, "a", Auth{Secret: secret}, nil, "")
	before := testutil.ToFloat64(telemetry.PeerReconnects.WithLabelValues(r.addr))
	tr, _ := startSender(t, "b", newFakeCore(added("b", 1, 1)), secret, nil, r.addr)
	eventually(t, "first snapshot", func() bool { return len(r.core.requests("b")) == 1 })
	r.g.Stop()
	eventually(t, "stream down", func() bool { return !tr.Peers()[r.addr] })
	r2 := startReceiver(t, "a", Auth{Secret: secret}, nil, r.addr)
	eventually(t, "snapshot after restart", func() bool { return len(r2.core.requests("b")) == 1 })
	if got := testutil.ToFloat64(telemetry.PeerReconnects.WithLabelValues(r.addr)); got != before+1 {
		t.Fatalf("reconnects %v, want %v", got, before+1)
	}
}

// Broadcast never blocks: with the peer down, a full queue drops and counts,
// and once the peer is up it gets a snapshot in place of what was lost.
func TestFullQueueDropsThenSnapshotHeals(t *testing.T) {
	addr := freeAddr(t)
	core := newFakeCore(added("b", 1, 1))
	tr, _ := startSender(t, "b", core, secret, nil, addr)
	// Run makes the links; events broadcast before it has none to queue on.
	eventually(t, "link made", func() bool { _, ok := tr.Peers()[addr]; return ok })
	before := testutil.ToFloat64(telemetry.PeerEventsDropped.WithLabelValues(addr, "queue_full"))
	for i := 0; i < 1000; i++ {
		tr.Broadcast([]replicasync.Event{added("b", uint64(i+2), uint64(i+2))})
	}
	if got := testutil.ToFloat64(telemetry.PeerEventsDropped.WithLabelValues(addr, "queue_full")) - before; got < 1000-4 {
		t.Fatalf("dropped %v events, want at least %d (queue of 4)", got, 1000-4)
	}
	core.snap = []replicasync.Event{added("b", 1001, 42)}
	r := startReceiver(t, "a", Auth{Secret: secret}, nil, addr)
	eventually(t, "snapshot replaces the lost events", func() bool { return slices.Equal(r.core.requests("b"), []uint64{42}) })
}

// A snapshot larger than one message is split; the receiver resets once.
func TestLargeSnapshotSplit(t *testing.T) {
	r := startReceiver(t, "a", Auth{Secret: secret}, nil, "")
	chain := make([]uint64, 200) // ~3.3 KB per event: one per 4 KiB message
	var snap []replicasync.Event
	for i := range 10 {
		snap = append(snap, added("b", uint64(i+1), uint64(i+1), chain...))
	}
	startSender(t, "b", newFakeCore(snap...), secret, nil, r.addr)
	eventually(t, "whole snapshot", func() bool { return len(r.core.requests("b")) == 10 })
	if got := r.core.expiries("b"); got != 1 {
		t.Fatalf("peer reset %d times by one split snapshot, want 1", got)
	}
}

// rawCodec sends bytes as they are, to put malformed batches on the wire.
type rawCodec struct{}

func (rawCodec) Name() string                  { return "raw" }
func (rawCodec) Marshal(v any) ([]byte, error) { return *v.(*[]byte), nil }
func (rawCodec) Unmarshal(d []byte, v any) error {
	*v.(*[]byte) = d
	return nil
}

// A malformed batch from an authenticated peer ends its stream; nothing of
// it is applied.
func TestMalformedBatchRefused(t *testing.T) {
	r := startReceiver(t, "a", Auth{Secret: secret}, nil, "")
	before := testutil.ToFloat64(telemetry.PeerRejected.WithLabelValues("decode"))
	conn, err := grpc.NewClient(r.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx := metadata.AppendToOutgoingContext(context.Background(), mdSecret, string(secret), mdReplica, "b")
	stream, err := conn.NewStream(ctx, pushStreamDesc, pushMethod, grpc.ForceCodec(rawCodec{}))
	if err != nil {
		t.Fatal(err)
	}
	good := appendBatch(nil, &batch{Events: []replicasync.Event{added("b", 1, 1)}})
	bad := good[:len(good)-1]
	if err := stream.SendMsg(&bad); err != nil {
		t.Fatal(err)
	}
	var reply []byte
	for err == nil {
		err = stream.RecvMsg(&reply) // heartbeats, then the refusal
	}
	if status.Code(err) != codes.Internal || !strings.Contains(err.Error(), "peer batch") {
		t.Fatalf("stream ended with %v, want Internal naming the bad batch", err)
	}
	if got := testutil.ToFloat64(telemetry.PeerRejected.WithLabelValues("decode")); got != before+1 {
		t.Fatalf("decode rejections %v, want %v", got, before+1)
	}
	if ids := r.core.requests("b"); len(ids) > 0 {
		t.Fatalf("a malformed batch was applied: %v", ids)
	}
}

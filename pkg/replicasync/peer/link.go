package peer

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/kvpick/kvpick/pkg/replicasync"
	"github.com/kvpick/kvpick/pkg/telemetry"
)

// link is the sending side's connection to one peer: a bounded queue and a
// goroutine that keeps one stream up and drains the queue into it.
type link struct {
	addr   string
	o      *TransportOptions
	q      chan []replicasync.Event
	conn   *grpc.ClientConn
	cancel context.CancelFunc
	dirty  atomic.Bool // events were dropped: send a snapshot when the queue drains
	up     atomic.Bool
	self   atomic.Bool // the address is this replica: not dialled again
}

func newLink(ctx context.Context, addr string, o *TransportOptions) (*link, error) {
	creds := insecure.NewCredentials()
	if o.TLS != nil {
		creds = credentials.NewTLS(o.TLS)
	}
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(creds),
		grpc.WithDefaultCallOptions(grpc.ForceCodec(codec{})))
	if err != nil {
		return nil, fmt.Errorf("peer %s: %w", addr, err)
	}
	ctx, cancel := context.WithCancel(ctx)
	l := &link{addr: addr, o: o, q: make(chan []replicasync.Event, o.QueueLen), conn: conn, cancel: cancel}
	go l.run(ctx)
	return l, nil
}

func (l *link) stop() { l.cancel() }

// enqueue never blocks: a full queue drops evs and marks the link dirty.
func (l *link) enqueue(evs []replicasync.Event) {
	if l.self.Load() {
		return
	}
	select {
	case l.q <- evs:
	default:
		l.dirty.Store(true)
		telemetry.PeerEventsDropped.WithLabelValues(l.addr, "queue_full").Add(float64(len(evs)))
	}
}

// run keeps a stream up until ctx ends, redialling with jittered backoff.
func (l *link) run(ctx context.Context) {
	defer l.conn.Close()
	backoff, wasUp := l.o.BackoffMin, false
	for ctx.Err() == nil {
		up, err := l.session(ctx)
		if isSelf(err) {
			l.self.Store(true)
			l.o.Log.V(1).Info("peer address is this replica; not dialling it", "peer", l.addr)
			return
		}
		if up {
			backoff, wasUp = l.o.BackoffMin, true
		}
		if ctx.Err() != nil {
			return
		}
		l.o.Log.V(1).Info("peer stream down", "peer", l.addr, "err", err, "retryIn", backoff)
		if status.Code(err) == codes.Unauthenticated {
			l.o.Log.Info("peer refused this replica's credentials (shared secret or client certificate)", "peer", l.addr, "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff/2 + rand.N(backoff/2+1)):
		}
		backoff = min(2*backoff, l.o.BackoffMax)
		if wasUp {
			telemetry.PeerReconnects.WithLabelValues(l.addr).Inc()
			wasUp = false
		}
	}
}

func isSelf(err error) bool {
	return status.Code(err) == codes.FailedPrecondition && strings.Contains(status.Convert(err).Message(), selfMessage)
}

// session opens one stream, sends a snapshot and then the queue, until the
// stream fails or goes silent. up reports whether the peer accepted it.
func (l *link) session(ctx context.Context) (up bool, err error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	md := metadata.Pairs(mdReplica, l.o.ID)
	if len(l.o.Secret) > 0 {
		md.Set(mdSecret, string(l.o.Secret))
	}
	stream, err := l.conn.NewStream(metadata.NewOutgoingContext(ctx, md), pushStreamDesc, pushMethod)
	if err != nil {
		return false, err
	}
	if h, err := stream.Header(); err != nil || h == nil {
		return false, recvStatus(stream, err)
	}
	l.up.Store(true)
	telemetry.PeerConnected.WithLabelValues(l.addr, "out").Set(1)
	defer func() {
		l.up.Store(false)
		telemetry.PeerConnected.WithLabelValues(l.addr, "out").Set(0)
	}()
	// A receiver gone silent (no heartbeat for two periods) ends the stream,
	// even while a send is blocked on its flow control.
	var silent atomic.Bool
	watchdog := time.AfterFunc(2*l.o.Heartbeat, func() { silent.Store(true); cancel() })
	defer watchdog.Stop()
	heard := make(chan error, 1)
	go listen(stream, func() { watchdog.Reset(2 * l.o.Heartbeat) }, heard)
	err = l.pump(ctx, stream, heard)
	if silent.Load() {
		err = errors.New("no heartbeat from the peer")
	}
	return true, err
}

// listen reads the receiver's heartbeats until the stream ends.
func listen(stream grpc.ClientStream, alive func(), done chan<- error) {
	for {
		var b batch
		if err := stream.RecvMsg(&b); err != nil {
			done <- err
			return
		}
		alive()
	}
}

func recvStatus(stream grpc.ClientStream, err error) error {
	if err != nil {
		return err
	}
	var b batch
	return stream.RecvMsg(&b)
}

// pump sends a snapshot, then queued events; after a drop, a new snapshot.
func (l *link) pump(ctx context.Context, stream grpc.ClientStream, heard <-chan error) error {
	l.dirty.Store(true)
	for {
		if l.dirty.Swap(false) {
			if err := l.sendSnapshot(stream); err != nil {
				return err
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case err := <-heard:
			return err
		case evs := <-l.q:
			if err := l.send(stream, 0, evs); err != nil {
				return err
			}
		}
	}
}

// sendSnapshot drops what is queued (the snapshot covers it) and sends the
// core's snapshot; the receiver replaces this replica's entries with it.
func (l *link) sendSnapshot(stream grpc.ClientStream) error {
	for drained := false; !drained; {
		select {
		case <-l.q:
		default:
			drained = true
		}
	}
	return l.send(stream, flagSnapshot, l.o.Core.Snapshot())
}

// send writes evs in messages of at most MaxBatchBytes; flags go on the
// first, and a snapshot's later parts carry flagSnapshotMore.
func (l *link) send(stream grpc.ClientStream, flags byte, evs []replicasync.Event) error {
	for first := true; first || len(evs) > 0; first = false {
		n, size := 0, 16
		for n < len(evs) && (n == 0 || size+encodedSize(&evs[n]) <= l.o.MaxBatchBytes) {
			size += encodedSize(&evs[n])
			n++
		}
		f := flags
		if !first && flags != 0 {
			f = flagSnapshotMore
		}
		if err := stream.SendMsg(&batch{Flags: f, Events: evs[:n]}); err != nil {
			return err
		}
		telemetry.PeerEventsSent.WithLabelValues(l.addr).Add(float64(n))
		evs = evs[n:]
	}
	return nil
}

package peer

import (
	"context"
	"crypto/tls"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/go-logr/logr"

	"github.com/kvpick/kvpick/pkg/replicasync"
	"github.com/kvpick/kvpick/pkg/telemetry"
)

// Snapshotter is the part of the core the sending side reads.
type Snapshotter interface {
	Snapshot() []replicasync.Event
}

// TransportOptions configure the sending side.
type TransportOptions struct {
	// ID is this replica's id, sent with every stream.
	ID   string
	Core Snapshotter
	// Secret is sent as gRPC metadata (may be empty when mTLS authenticates).
	Secret []byte
	// TLS is the dialer's TLS (ClientTLS); nil dials in plaintext.
	TLS *tls.Config
	// QueueLen bounds each peer's queue of batches; a full queue drops.
	QueueLen int
	// MaxBatchBytes bounds one message (a snapshot is split to fit).
	MaxBatchBytes int
	// Heartbeat is the receivers' heartbeat period: a stream that hears
	// nothing for twice this is ended and redialled.
	Heartbeat time.Duration
	// BackoffMin and BackoffMax bound the redial delay (doubling, jittered).
	BackoffMin, BackoffMax time.Duration
	Log                    logr.Logger
}

// Transport pushes this replica's events to every peer. Broadcast never
// blocks. Safe for concurrent use.
type Transport struct {
	o     TransportOptions
	mu    sync.Mutex
	ctx   context.Context // set by Run; nil before
	peers []string
	links map[string]*link
}

// NewTransport returns a transport with no peers; call Run, then SetPeers.
func NewTransport(o TransportOptions) (*Transport, error) {
	if o.Core == nil || o.ID == "" || o.QueueLen <= 0 || o.MaxBatchBytes <= 0 || o.Heartbeat <= 0 || o.BackoffMin <= 0 || o.BackoffMax < o.BackoffMin {
		return nil, errors.New("peer transport: core, id, queue length, batch bytes, heartbeat and backoff are required")
	}
	return &Transport{o: o, links: map[string]*link{}}, nil
}

// Run dials the peers until ctx ends.
func (t *Transport) Run(ctx context.Context) {
	t.mu.Lock()
	t.ctx = ctx
	t.syncLinks()
	t.mu.Unlock()
	<-ctx.Done()
	t.mu.Lock()
	defer t.mu.Unlock()
	for addr, l := range t.links {
		l.stop()
		delete(t.links, addr)
	}
}

// SetPeers replaces the peer addresses (host:port). Links to addresses that
// stay are kept; removed ones are closed.
func (t *Transport) SetPeers(addrs []string) {
	addrs = slices.Compact(slices.Sorted(slices.Values(addrs)))
	t.mu.Lock()
	defer t.mu.Unlock()
	t.peers = addrs
	if t.ctx != nil && t.ctx.Err() == nil {
		t.syncLinks()
	}
}

func (t *Transport) syncLinks() {
	for addr, l := range t.links {
		if !slices.Contains(t.peers, addr) {
			l.stop()
			delete(t.links, addr)
			telemetry.ForgetPeer(addr)
		}
	}
	for _, addr := range t.peers {
		if t.links[addr] == nil {
			l, err := newLink(t.ctx, addr, &t.o)
			if err != nil {
				t.o.Log.Error(err, "peer not dialled", "peer", addr)
				continue
			}
			t.links[addr] = l
		}
	}
}

// Broadcast queues evs for every peer without blocking: a peer whose queue
// is full loses them (counted), and gets a fresh snapshot once it drains.
func (t *Transport) Broadcast(evs []replicasync.Event) {
	if len(evs) == 0 {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, l := range t.links {
		l.enqueue(evs)
	}
}

// Peers lists the addresses dialled now and whether each stream is up
// (an address found to be this replica itself is left out).
func (t *Transport) Peers() map[string]bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := map[string]bool{}
	for addr, l := range t.links {
		if !l.self.Load() {
			out[addr] = l.up.Load()
		}
	}
	return out
}

// MaxBatchBytes is the largest message a sender writes (a snapshot is split
// to fit); well under gRPC's 4 MiB default receive limit.
const MaxBatchBytes = 1 << 20

var _ replicasync.Transport = (*Transport)(nil)

package peer

import (
	"context"
	"crypto/tls"
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"github.com/kvpick/kvpick/pkg/replicasync"
)

// fakeCore records what the transport hands it: per peer, the events held
// (ExpirePeer clears them) and how often each peer was expired.
type fakeCore struct {
	mu      sync.Mutex
	snap    []replicasync.Event
	held    map[string][]replicasync.Event
	expired map[string]int
}

func newFakeCore(snap ...replicasync.Event) *fakeCore {
	return &fakeCore{snap: snap, held: map[string][]replicasync.Event{}, expired: map[string]int{}}
}

func (c *fakeCore) Snapshot() []replicasync.Event {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.snap)
}

func (c *fakeCore) Apply(peer string, evs []replicasync.Event) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.held[peer] = append(c.held[peer], evs...)
}

func (c *fakeCore) ExpirePeer(peer string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.held, peer)
	c.expired[peer]++
}

// requests lists the request ids held for peer, in arrival order.
func (c *fakeCore) requests(peer string) []uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	var ids []uint64
	for _, e := range c.held[peer] {
		ids = append(ids, e.Request)
	}
	return ids
}

func (c *fakeCore) expiries(peer string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.expired[peer]
}

const (
	hb     = 250 * time.Millisecond
	expiry = time.Second
	wait   = 20 * time.Second // generous: success returns at once
)

var secret = []byte("s3cret-shared-by-replicas")

// receiver is a peer server on loopback.
type receiver struct {
	addr string
	core *fakeCore
	srv  *Server
	g    *grpc.Server
}

func startReceiver(t *testing.T, id string, auth Auth, tlsConf *tls.Config, addr string) *receiver {
	t.Helper()
	core := newFakeCore()
	r := startReceiverCore(t, id, core, auth, tlsConf, addr)
	r.core = core
	return r
}

// startReceiverCore serves core (the fake, or the real replica).
func startReceiverCore(t *testing.T, id string, core Core, auth Auth, tlsConf *tls.Config, addr string) *receiver {
	t.Helper()
	r := &receiver{}
	var err error
	r.srv, err = NewServer(ServerOptions{ID: id, Core: core, Auth: auth, Expiry: expiry, Heartbeat: hb, Log: logr.Discard()})
	if err != nil {
		t.Fatal(err)
	}
	opts := GRPCServerOptions(hb)
	if tlsConf != nil {
		opts = append(opts, grpc.Creds(credentials.NewTLS(tlsConf)))
	}
	r.g = grpc.NewServer(opts...)
	r.srv.Register(r.g)
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	r.addr = lis.Addr().String()
	go r.g.Serve(lis) //nolint:errcheck // ends with Stop
	t.Cleanup(r.g.Stop)
	return r
}

// startSender runs a transport for replica id pushing to addrs.
func startSender(t *testing.T, id string, core Snapshotter, sec []byte, tlsConf *tls.Config, addrs ...string) (*Transport, context.CancelFunc) {
	t.Helper()
	tr, err := NewTransport(TransportOptions{ID: id, Core: core, Secret: sec, TLS: tlsConf, QueueLen: 4, MaxBatchBytes: 4096,
		Heartbeat: hb, BackoffMin: 20 * time.Millisecond, BackoffMax: 100 * time.Millisecond, Log: logr.Discard()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { tr.Run(ctx); close(done) }()
	tr.SetPeers(addrs)
	t.Cleanup(func() { cancel(); <-done })
	return tr, cancel
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(wait); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// freeAddr is a loopback address nobody listens on (yet).
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

var _ Core = (*replicasync.Replica)(nil) // the real core fits the transport's view of it

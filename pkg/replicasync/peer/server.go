package peer

import (
	"errors"
	"io"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/kvpick/kvpick/pkg/replicasync"
	"github.com/kvpick/kvpick/pkg/telemetry"
)

// Core is the replica sync core as the transport uses it (pkg/replicasync's
// *Replica): its own in-flight work as events, and the peers' events.
type Core interface {
	// Snapshot returns this replica's own in-flight work as events.
	Snapshot() []replicasync.Event
	// Apply merges events that the replica peer originated.
	Apply(peer string, evs []replicasync.Event)
	// ExpirePeer removes everything peer contributed.
	ExpirePeer(peer string)
}

// ServerOptions configure the receiving side.
type ServerOptions struct {
	// ID is this replica's id: a stream claiming it is this replica dialling itself.
	ID   string
	Core Core
	Auth Auth
	// Expiry is how long a peer's stream may stay down before its entries are expired.
	Expiry time.Duration
	// Heartbeat is how often the server tells a sender it is alive (an empty
	// batch); a sender that hears nothing for twice this ends the stream.
	Heartbeat time.Duration
	Log       logr.Logger
}

// Server receives peers' events and applies those of authenticated peers.
// Safe for concurrent use.
type Server struct {
	o     ServerOptions
	mu    sync.Mutex
	gen   uint64
	peers map[string]*inbound
}

// inbound is what the server knows of one peer replica.
type inbound struct {
	apply sync.Mutex  // one batch at a time per peer, and a snapshot's reset with its events
	gen   uint64      // the current stream's generation; 0 while down
	timer *time.Timer // expiry while down
}

// NewServer returns a server; register it with Register.
func NewServer(o ServerOptions) (*Server, error) {
	if err := o.Auth.Validate(); err != nil {
		return nil, err
	}
	if o.Core == nil || o.ID == "" || o.Expiry <= 0 || o.Heartbeat <= 0 {
		return nil, errors.New("peer server: core, id, a positive expiry and heartbeat are required")
	}
	return &Server{o: o, peers: map[string]*inbound{}}, nil
}

// Register adds the peer service to g (build g with ServerOptions).
func (s *Server) Register(g *grpc.Server) { g.RegisterService(&serviceDesc, s) }

// GRPCServerOptions are the options a server hosting the peer service needs:
// the codec, and keepalive pings so that a sender gone silent (partitioned,
// frozen) ends its stream within about twice heartbeat.
func GRPCServerOptions(heartbeat time.Duration) []grpc.ServerOption {
	return append(keepaliveServer(heartbeat), grpc.ForceServerCodec(codec{}))
}

func (s *Server) push(stream grpc.ServerStream) error {
	id, err := s.o.Auth.check(stream.Context())
	if err != nil {
		telemetry.PeerRejected.WithLabelValues("unauthenticated").Inc()
		s.o.Log.Info("refused a peer stream", "reason", err.Error())
		return status.Error(codes.Unauthenticated, err.Error())
	}
	if id == s.o.ID {
		telemetry.PeerRejected.WithLabelValues("self").Inc()
		return status.Error(codes.FailedPrecondition, selfMessage)
	}
	if err := stream.SendHeader(metadata.Pairs(mdReplica, s.o.ID)); err != nil {
		return err
	}
	in, gen := s.attach(id)
	defer s.detach(id, in, gen)
	s.o.Log.V(1).Info("peer connected", "peer", id)
	stop, stopped := make(chan struct{}), make(chan struct{})
	go func() { s.heartbeat(stream, stop); close(stopped) }()
	defer func() { close(stop); <-stopped }() // no send may race the stream's teardown when the handler returns
	for {
		var b batch
		if err := stream.RecvMsg(&b); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			if status.Code(err) == codes.Internal {
				telemetry.PeerRejected.WithLabelValues("decode").Inc()
			}
			return err
		}
		if !s.apply(id, in, gen, &b) {
			return status.Error(codes.Aborted, "superseded by a newer stream from the same replica")
		}
	}
}

// heartbeat sends an empty batch every Heartbeat until stop or a send fails.
func (s *Server) heartbeat(stream grpc.ServerStream, stop <-chan struct{}) {
	t := time.NewTicker(s.o.Heartbeat)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			if stream.SendMsg(&batch{}) != nil {
				return
			}
		}
	}
}

// selfMessage marks the refusal a sender treats as "this address is me".
const selfMessage = "peer is this replica"

// apply hands b to the core unless a newer stream from the peer took over.
// A snapshot replaces what the peer contributed so far.
func (s *Server) apply(id string, in *inbound, gen uint64, b *batch) bool {
	evs := b.Events[:0]
	for _, e := range b.Events {
		if e.Origin == id {
			evs = append(evs, e)
		} else {
			telemetry.PeerRejected.WithLabelValues("origin").Inc()
		}
	}
	in.apply.Lock()
	defer in.apply.Unlock()
	s.mu.Lock()
	current := in.gen == gen
	s.mu.Unlock()
	if !current {
		return false
	}
	if b.Flags&flagSnapshot != 0 {
		s.o.Core.ExpirePeer(id)
	}
	if len(evs) > 0 {
		s.o.Core.Apply(id, evs)
		telemetry.PeerEventsReceived.WithLabelValues(id).Add(float64(len(evs)))
	}
	return true
}

// attach makes this stream the peer's current one and cancels its expiry.
func (s *Server) attach(id string) (*inbound, uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	in := s.peers[id]
	if in == nil {
		in = &inbound{}
		s.peers[id] = in
	}
	if in.timer != nil {
		in.timer.Stop()
		in.timer = nil
	}
	s.gen++
	in.gen = s.gen
	telemetry.PeerConnected.WithLabelValues(id, "in").Set(1)
	return in, in.gen
}

// detach starts the expiry clock when the ending stream was the current one.
func (s *Server) detach(id string, in *inbound, gen uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if in.gen != gen {
		return
	}
	in.gen = 0
	telemetry.PeerConnected.WithLabelValues(id, "in").Set(0)
	s.o.Log.V(1).Info("peer stream down", "peer", id, "expiresIn", s.o.Expiry)
	in.timer = time.AfterFunc(s.o.Expiry, func() { s.expire(id, in) })
}

func (s *Server) expire(id string, in *inbound) {
	in.apply.Lock()
	defer in.apply.Unlock()
	s.mu.Lock()
	if in.gen != 0 || s.peers[id] != in {
		s.mu.Unlock()
		return // it came back
	}
	delete(s.peers, id)
	s.mu.Unlock()
	s.o.Core.ExpirePeer(id)
	telemetry.PeerExpired.Inc()
	telemetry.ForgetPeer(id)
	s.o.Log.Info("peer expired: its in-flight work and predicted entries are dropped", "peer", id, "downFor", s.o.Expiry)
}

// Connected lists the replica ids with a stream up now.
func (s *Server) Connected() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var ids []string
	for id, in := range s.peers {
		if in.gen != 0 {
			ids = append(ids, id)
		}
	}
	return ids
}

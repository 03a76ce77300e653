package extproc

import (
	"sync/atomic"

	extprocv3 "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"
	"github.com/go-logr/logr"
	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/kvpick/kvpick/pkg/route"
	"github.com/kvpick/kvpick/pkg/telemetry"

	v1 "github.com/kvpick/kvpick/api/v1alpha1"
)

// Options tune the server. Zero values take the defaults.
type Options struct {
	MaxBodyBytes int64  // default 32 MiB -> 413 request_too_large (JSON body naming the limit)
	ChunkBytes   int    // max bytes per streamed body chunk returned to Envoy, default and max 62,000
	Mode         string // router mode name, for metrics labels
	Log          logr.Logger
}

func (o Options) withDefaults() Options {
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = v1.Default().Server.MaxBodyBytes
	}
	if o.ChunkBytes <= 0 || o.ChunkBytes > MaxChunkBytes {
		o.ChunkBytes = MaxChunkBytes
	}
	return o
}

// Health service names. Liveness is always SERVING while the process runs; the others follow SetReady.
const (
	HealthLiveness  = "liveness"
	HealthReadiness = "readiness"
	HealthExtProc   = "envoy.service.ext_proc.v3.ExternalProcessor"
	// HealthReference is the service the reference picker's chart probes (liveness and readiness) with one replica.
	HealthReference = "inference-extension"
)

var readinessServices = []string{"", HealthReadiness, HealthExtProc, HealthReference}

// Server is the ext_proc server. It implements extprocv3.ExternalProcessorServer; one Process call handles one
// HTTP request. Safe for concurrent use.
type Server struct {
	extprocv3.UnimplementedExternalProcessorServer
	decider route.Decider
	opts    Options
	health  *health.Server
	ready   atomic.Bool
}

// NewServer returns a server that routes with r. It starts not ready: call SetReady(true) once endpoints are known.
func NewServer(r route.Decider, o Options) *Server {
	s := &Server{decider: r, opts: o.withDefaults(), health: health.NewServer()}
	s.health.SetServingStatus(HealthLiveness, healthpb.HealthCheckResponse_SERVING)
	s.SetReady(false)
	return s
}

// Register adds the ext_proc service and the standard gRPC health service to g.
func (s *Server) Register(g *grpc.Server) {
	extprocv3.RegisterExternalProcessorServer(g, s)
	healthpb.RegisterHealthServer(g, s.health)
}

// RegisterHealth adds only the gRPC health service to g, for a separate health port.
func (s *Server) RegisterHealth(g *grpc.Server) { healthpb.RegisterHealthServer(g, s.health) }

// SetReady sets the "", "readiness" and ext_proc health statuses. Safe for concurrent use.
func (s *Server) SetReady(ready bool) {
	s.ready.Store(ready)
	st := healthpb.HealthCheckResponse_NOT_SERVING
	if ready {
		st = healthpb.HealthCheckResponse_SERVING
	}
	for _, name := range readinessServices {
		s.health.SetServingStatus(name, st)
	}
}

// Ready reports the last SetReady value.
func (s *Server) Ready() bool { return s.ready.Load() }

// Process handles one ext_proc stream (one HTTP request): receive, dispatch on the phase, repeat until the proxy
// closes the stream or the picker answered with an immediate response.
func (s *Server) Process(srv extprocv3.ExternalProcessor_ProcessServer) (err error) {
	telemetry.ExtprocActiveStreams.Inc()
	defer telemetry.ExtprocActiveStreams.Dec()
	st := s.newStream(srv)
	defer st.release()
	defer st.recoverPanic(&err)
	for !st.closed {
		msg, err := srv.Recv()
		if err != nil {
			return st.recvEnded(err)
		}
		if err := st.handle(msg); err != nil {
			st.abort(err)
			return err
		}
	}
	return nil
}

package extproc

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/keepalive"
)

// NewGRPCServer returns a gRPC server configured for Envoy (message size fits a buffered body at the limit,
// keepalive pings permitted) with s registered. tlsConf nil means plaintext.
func NewGRPCServer(s *Server, tlsConf *tls.Config) *grpc.Server {
	opts := []grpc.ServerOption{
		grpc.MaxRecvMsgSize(int(min(s.opts.MaxBodyBytes+1<<20, 1<<31-1))),
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: 5 * time.Second, PermitWithoutStream: true}),
	}
	if tlsConf != nil {
		opts = append(opts, grpc.Creds(credentials.NewTLS(tlsConf)))
	}
	g := grpc.NewServer(opts...)
	s.Register(g)
	return g
}

// ServeGRPC serves s on lis until ctx ends, then shuts down gracefully: it marks the server not ready, lets
// in-flight streams finish for up to grace, then stops hard. It returns nil after a shutdown caused by ctx and the
// serve error otherwise.
func ServeGRPC(ctx context.Context, lis net.Listener, s *Server, tlsConf *tls.Config, grace time.Duration) error {
	g := NewGRPCServer(s, tlsConf)
	errc := make(chan error, 1)
	go func() { errc <- g.Serve(lis) }()
	select {
	case err := <-errc:
		return fmt.Errorf("grpc serve: %w", err)
	case <-ctx.Done():
	}
	s.SetReady(false)
	shutdown(g, grace)
	if err := <-errc; err != nil && !errors.Is(err, grpc.ErrServerStopped) {
		return fmt.Errorf("grpc serve: %w", err)
	}
	return nil
}

// shutdown stops g gracefully, hard after grace.
func shutdown(g *grpc.Server, grace time.Duration) {
	stopped := make(chan struct{})
	go func() { g.GracefulStop(); close(stopped) }()
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-stopped:
	case <-t.C:
		g.Stop()
		<-stopped
	}
}

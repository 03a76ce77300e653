package peer

import (
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/keepalive"
)

// keepaliveServer pings an idle sender every d (gRPC's floor is 1s) and
// drops it when a ping goes unanswered for d. Senders are told apart from
// dead ones by these pings; the server's own liveness reaches senders as
// heartbeat batches, since gRPC clients may ping no more often than 10s.
func keepaliveServer(d time.Duration) []grpc.ServerOption {
	return []grpc.ServerOption{
		grpc.KeepaliveParams(keepalive.ServerParameters{Time: d, Timeout: d}),
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: 5 * time.Second, PermitWithoutStream: true}),
	}
}

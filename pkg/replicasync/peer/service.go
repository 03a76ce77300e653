package peer

import (
	"fmt"

	"google.golang.org/grpc"
)

// The peer service, hand-written (no protoc): one bidirectional stream per
// sender and receiver. The sender pushes batches; the receiver sends nothing
// and ends the stream with a status when it refuses or stops.
const (
	serviceName = "kvpick.replicasync.v1.Peer"
	pushMethod  = "/" + serviceName + "/Push"

	// mdSecret carries the shared secret; mdReplica the sender's replica id.
	mdSecret  = "x-kvpick-peer-secret"
	mdReplica = "x-kvpick-replica-id"
)

// pushHandler is what serviceDesc dispatches to (implemented by *Server).
type pushHandler interface {
	push(stream grpc.ServerStream) error
}

var serviceDesc = grpc.ServiceDesc{
	ServiceName: serviceName,
	HandlerType: (*pushHandler)(nil),
	Streams: []grpc.StreamDesc{{
		StreamName:    "Push",
		Handler:       func(srv any, s grpc.ServerStream) error { return srv.(pushHandler).push(s) },
		ServerStreams: true,
		ClientStreams: true,
	}},
}

var pushStreamDesc = &serviceDesc.Streams[0]

// codec is the gRPC codec of the peer service: it (de)serialises *batch with
// the wire format in codec.go. Forced on both ends, so no registry is needed.
type codec struct{}

func (codec) Name() string { return "kvpick-peer-v1" }

func (codec) Marshal(v any) ([]byte, error) {
	b, ok := v.(*batch)
	if !ok {
		return nil, fmt.Errorf("peer codec: cannot marshal %T", v)
	}
	return appendBatch(nil, b), nil
}

func (codec) Unmarshal(data []byte, v any) error {
	b, ok := v.(*batch)
	if !ok {
		return fmt.Errorf("peer codec: cannot unmarshal into %T", v)
	}
	got, err := decodeBatch(data)
	if err != nil {
		return err
	}
	*b = *got
	return nil
}

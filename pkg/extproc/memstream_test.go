package extproc

import (
	"context"
	"errors"
	"io"

	extprocv3 "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"
)

// memStream is an in-memory ext_proc server stream: Recv replays msgs then returns io.EOF (or recvErr); Send
// records (or fails after failAfter sends when failAfter > 0, and every send when it is negative).
type memStream struct {
	grpc.ServerStream
	ctx       context.Context
	msgs      []*extprocv3.ProcessingRequest
	recvErr   error
	sent      []*extprocv3.ProcessingResponse
	nsent     int
	failAfter int
	discard   bool // count answers without keeping them (benchmarks)
}

var _ extprocv3.ExternalProcessor_ProcessServer = (*memStream)(nil)

func newMemStream(msgs ...*extprocv3.ProcessingRequest) *memStream {
	return &memStream{ctx: context.Background(), msgs: msgs}
}

func (m *memStream) Context() context.Context     { return m.ctx }
func (m *memStream) SetHeader(metadata.MD) error  { return nil }
func (m *memStream) SendHeader(metadata.MD) error { return nil }
func (m *memStream) SetTrailer(metadata.MD)       {}

func (m *memStream) Recv() (*extprocv3.ProcessingRequest, error) {
	if len(m.msgs) == 0 {
		if m.recvErr != nil {
			return nil, m.recvErr
		}
		return nil, io.EOF
	}
	msg := m.msgs[0]
	m.msgs = m.msgs[1:]
	return msg, nil
}

func (m *memStream) Send(r *extprocv3.ProcessingResponse) error {
	if m.failAfter != 0 && m.nsent >= max(m.failAfter, 0) {
		return errors.New("send failed")
	}
	m.nsent++
	if !m.discard { // a copy: the server reuses body buffers once the stream ends, as gRPC's Send allows
		m.sent = append(m.sent, proto.Clone(r).(*extprocv3.ProcessingResponse))
	}
	return nil
}

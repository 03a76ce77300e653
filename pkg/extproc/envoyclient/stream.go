package envoyclient

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	extprocv3 "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"
)

// Stream is one request's ext_proc stream after routing. Not safe for concurrent use (one HTTP request).
type Stream struct {
	ps      extprocv3.ExternalProcessor_ProcessClient
	cancel  context.CancelFunc
	mode    Mode
	routed  bool
	pending []byte // buffered mode: response body gathered until its end
	closed  bool
	// lastChunkAt is when the last request body chunk was handed to the
	// stream (written by the sender before it finishes).
	lastChunkAt time.Time
}

func (st *Stream) recv() (*extprocv3.ProcessingResponse, error) {
	msg, err := st.ps.Recv()
	if err != nil {
		return nil, fmt.Errorf("envoyclient: recv: %w", err)
	}
	return msg, nil
}

// Respond simulates the response path: response headers (status, content type, the served endpoint as envoy.lb
// metadata) and the body chunks, checking each answer. ctx ending aborts the stream.
func (st *Stream) Respond(ctx context.Context, status int, contentType, served string, chunks [][]byte) error {
	stop := context.AfterFunc(ctx, st.cancel)
	defer stop()
	if err := st.SendResponseHeaders(status, contentType, served, len(chunks) == 0); err != nil {
		return err
	}
	for i, c := range chunks {
		if _, err := st.SendResponseBody(c, i == len(chunks)-1); err != nil {
			return err
		}
	}
	return nil
}

// SendResponseHeaders sends the upstream response headers and reads their answer.
func (st *Stream) SendResponseHeaders(code int, contentType, served string, eos bool) error {
	if !st.routed {
		return errors.New("envoyclient: response on a stream that was not routed")
	}
	h := map[string]string{":status": strconv.Itoa(code)}
	if contentType != "" {
		h["content-type"] = contentType
	}
	msg := &extprocv3.ProcessingRequest{
		Request: &extprocv3.ProcessingRequest_ResponseHeaders{ResponseHeaders: &extprocv3.HttpHeaders{
			Headers: headerMap(h), EndOfStream: eos}},
		MetadataContext: servedMetadata(served),
	}
	if err := st.ps.Send(msg); err != nil {
		return fmt.Errorf("envoyclient: send: %w", err)
	}
	ans, err := st.recv()
	if err != nil {
		return err
	}
	if ans.GetResponseHeaders() == nil {
		return invariant("expected the response headers answer, got %T", ans.GetResponse())
	}
	return nil
}

// SendResponseBody passes one upstream body chunk through the picker and returns what the proxy would forward
// downstream: the echo in streamed mode; in buffered mode nothing until eos, then the whole body.
func (st *Stream) SendResponseBody(chunk []byte, eos bool) ([]byte, error) {
	if st.mode == Buffered {
		st.pending = append(st.pending, chunk...)
		if !eos {
			return nil, nil
		}
		chunk = st.pending
	}
	if err := st.ps.Send(bodyMessage(true, chunk, eos)); err != nil {
		return nil, fmt.Errorf("envoyclient: send: %w", err)
	}
	ans, err := st.recv()
	if err != nil {
		return nil, err
	}
	if ans.GetResponseBody() == nil {
		return nil, invariant("expected a response body answer, got %T", ans.GetResponse())
	}
	if st.mode == Buffered {
		return chunk, nil
	}
	sb := ans.GetResponseBody().GetResponse().GetBodyMutation().GetStreamedResponse()
	if sb == nil || !bytes.Equal(sb.GetBody(), chunk) || sb.GetEndOfStream() != eos {
		return nil, invariant("response chunk not echoed as sent")
	}
	return sb.GetBody(), nil
}

func servedMetadata(served string) *corev3.Metadata {
	if served == "" {
		return nil
	}
	ns := &structpb.Struct{Fields: map[string]*structpb.Value{keyServed: structpb.NewStringValue(served)}}
	return &corev3.Metadata{FilterMetadata: map[string]*structpb.Struct{metadataNamespace: ns}}
}

// Abort cancels the stream, as Envoy does when the downstream client goes away.
func (st *Stream) Abort() {
	st.closed = true
	st.cancel()
}

// Close half-closes the stream as Envoy does at the end of a request and waits for the picker to end it. It
// returns an error if the picker sent anything unexpected or failed the stream.
func (st *Stream) Close() error {
	if st.closed {
		return nil
	}
	st.closed = true
	defer st.cancel()
	if err := st.ps.CloseSend(); err != nil {
		return fmt.Errorf("envoyclient: close: %w", err)
	}
	msg, err := st.ps.Recv()
	switch {
	case errors.Is(err, io.EOF):
		return nil
	case status.Code(err) == codes.Canceled:
		return nil
	case err != nil:
		return fmt.Errorf("envoyclient: close: %w", err)
	}
	return invariant("unexpected message at close: %T", msg.GetResponse())
}

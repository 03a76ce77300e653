package extproc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	extprocv3 "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/kvpick/kvpick/pkg/request"
	"github.com/kvpick/kvpick/pkg/route"
)

// bodyMode is how the proxy exchanges a body with the picker.
type bodyMode int

const (
	// modeUnknown: no protocol_config seen; the picker holds the headers response (the protocol's streamed mode).
	modeUnknown bodyMode = iota
	// modeStreamed: FULL_DUPLEX_STREAMED; the picker owns the body and echoes it back.
	modeStreamed
	// modeBuffered: the proxy waits for the headers response, then sends the body (BUFFERED and the rest).
	modeBuffered
	// modeNone: the proxy sends no body; route at the headers.
	modeNone
)

// errProtocol marks a message sequence the ext_proc protocol does not allow.
var errProtocol = errors.New("ext_proc protocol violation")

// stream is the per-request state of one Process call. It is used from the stream goroutine only.
type stream struct {
	s     *Server
	srv   extprocv3.ExternalProcessor_ProcessServer
	ctx   context.Context
	start time.Time

	configured bool // protocol_config (or its absence) already read from the first message
	reqMode    bodyMode
	respMode   bodyMode
	observe    bool // observability mode: the proxy ignores answers, send none

	gotHeaders      bool
	headersAnswered bool // the request-headers response went out before the body ended
	bodyDone        bool
	path            string
	kind            request.Kind
	headers         map[string]string
	body            []byte
	prompt          *[]byte // pooled buffer the parsed Prompt lives in
	subset          []string
	subsetPresent   bool
	rewritten       bool // the body was changed (model rewrite): buffered mode must send it back

	dec       route.Decision
	model     string
	endpoint  string    // counted in the in-flight gauge
	inputEnd  time.Time // the request's end (body or headers) reached the picker
	decidedAt time.Time
	ended     bool // the request was accounted for (Done called, metrics counted)
	closed    bool // an immediate response ended the exchange

	resp responseState
}

func (s *Server) newStream(srv extprocv3.ExternalProcessor_ProcessServer) *stream {
	return &stream{s: s, srv: srv, ctx: srv.Context(), start: time.Now()}
}

// handle dispatches one message to its phase method.
func (st *stream) handle(msg *extprocv3.ProcessingRequest) error {
	st.readContext(msg)
	switch r := msg.GetRequest().(type) {
	case *extprocv3.ProcessingRequest_RequestHeaders:
		return st.onRequestHeaders(r.RequestHeaders)
	case *extprocv3.ProcessingRequest_RequestBody:
		return st.onRequestBody(r.RequestBody)
	case *extprocv3.ProcessingRequest_RequestTrailers:
		return st.onRequestTrailers()
	case *extprocv3.ProcessingRequest_ResponseHeaders:
		return st.onResponseHeaders(r.ResponseHeaders)
	case *extprocv3.ProcessingRequest_ResponseBody:
		return st.onResponseBody(r.ResponseBody)
	case *extprocv3.ProcessingRequest_ResponseTrailers:
		return st.onResponseTrailers()
	}
	return nil // flow-control-only messages need no answer
}

// send writes one response unless the proxy runs in observability mode (it ignores answers).
func (st *stream) send(r *extprocv3.ProcessingResponse) error {
	if st.observe {
		return nil
	}
	if err := st.srv.Send(r); err != nil {
		return fmt.Errorf("ext_proc send: %w", err)
	}
	return nil
}

// protocolError is returned to the proxy as a gRPC FailedPrecondition and
// still matches errProtocol (errors.Is) on this side.
func protocolError(format string, args ...any) error {
	return &statusError{code: codes.FailedPrecondition, err: fmt.Errorf("%w: "+format, append([]any{errProtocol}, args...)...)}
}

// statusError is an error that gRPC reports with its code (GRPCStatus) and
// that keeps its cause for errors.Is/As.
type statusError struct {
	code codes.Code
	err  error
}

func (e *statusError) Error() string              { return e.err.Error() }
func (e *statusError) Unwrap() error              { return e.err }
func (e *statusError) GRPCStatus() *status.Status { return status.New(e.code, e.err.Error()) }

// recvEnded ends the stream when Recv fails: io.EOF is the proxy closing the stream, anything else a cancellation.
func (st *stream) recvEnded(err error) error {
	if errors.Is(err, io.EOF) {
		if st.resp.gotHeaders {
			st.finish(st.resp.outcomeErr(), outcomeFor(st.resp.outcomeErr()), st.resp.status)
		} else {
			st.abort(errors.New("ext_proc stream closed before the response"))
		}
		return nil
	}
	st.abort(fmt.Errorf("ext_proc stream: %w", err))
	return err
}

// abort ends a routed request with err (no-op when none is routed or it already ended).
func (st *stream) abort(err error) {
	if st.ended {
		return
	}
	if st.dec == nil {
		st.ended = true
		if st.gotHeaders {
			countRequest("", st.s.opts.Mode, outcomeCanceled, 0)
		}
		return
	}
	st.finish(err, outcomeCanceled, st.resp.status)
}

// release returns the body and prompt buffers to their pools once nothing can reference it: the Decision has ended (or there is
// none). A decision still open here (cannot happen through Process) keeps its buffer.
func (st *stream) release() {
	if st.dec == nil || st.ended {
		putBody(st.body)
		st.body = nil
		putPrompt(st.prompt)
		st.prompt = nil
	}
}

// recoverPanic turns a panic below the stream (a Decider bug) into a failed stream instead of a dead process: the
// Decision ends with an error and the proxy sees an Internal gRPC status (its failure mode applies).
func (st *stream) recoverPanic(err *error) {
	p := recover()
	if p == nil {
		return
	}
	st.s.opts.Log.Error(fmt.Errorf("panic: %v", p), "ext_proc stream panicked", "path", stripQuery(st.path))
	st.abort(fmt.Errorf("ext_proc stream panicked: %v", p))
	*err = status.Errorf(codes.Internal, "ext_proc stream panicked")
}

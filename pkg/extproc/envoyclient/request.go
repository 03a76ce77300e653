package envoyclient

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	extprocv3 "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"
	"google.golang.org/protobuf/types/known/structpb"
)

// Protocol names (mirrors of pkg/extproc's; the client must not depend on the server).
const (
	headerDestination = "x-gateway-destination-endpoint"
	metadataNamespace = "envoy.lb"
	keyDestination    = "x-gateway-destination-endpoint"
	keyServed         = "x-gateway-destination-endpoint-served"
	subsetNamespace   = "envoy.lb.subset_hint"
	subsetKey         = "x-gateway-destination-endpoint-subset"
	maxChunk          = 62000
)

// ErrInvariant marks an answer that breaks the Endpoint Picker protocol.
var ErrInvariant = errors.New("envoyclient: protocol invariant broken")

func invariant(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvariant}, args...)...)
}

// routeStreamed sends headers and body chunks without waiting (as FULL_DUPLEX_STREAMED does) while reading the
// headers answer and the echoed body.
func (st *Stream) routeStreamed(req Request) (*Result, error) {
	sent := make(chan error, 1)
	go func() { sent <- st.sendRequest(req) }()
	res, err := st.readStreamedDecision(req)
	sendErr := <-sent
	if err != nil {
		return nil, err
	}
	if res != nil && !res.decidedAt.IsZero() {
		res.DecisionLatency = res.decidedAt.Sub(st.lastChunkAt)
	}
	if sendErr != nil && res.Status == 0 {
		return nil, sendErr
	}
	return res, nil
}

// sendRequest writes the headers and the body chunks. A send failing with io.EOF means the picker ended the
// stream (immediate response): not an error here.
func (st *Stream) sendRequest(req Request) error {
	if err := st.ps.Send(headersMessage(req)); err != nil {
		return sendErr(err)
	}
	if req.Body == nil {
		return nil
	}
	for _, chunk := range split(req.Body, req.ChunkSizes) {
		if chunk.last {
			st.lastChunkAt = time.Now() // the picker cannot decide before it has this chunk
		}
		if err := st.ps.Send(bodyMessage(false, chunk.data, chunk.last)); err != nil {
			return sendErr(err)
		}
	}
	return nil
}

func sendErr(err error) error {
	if errors.Is(err, io.EOF) {
		return nil
	}
	return fmt.Errorf("envoyclient: send: %w", err)
}

// readStreamedDecision reads the headers answer (or an immediate response), then the echoed body.
func (st *Stream) readStreamedDecision(req Request) (*Result, error) {
	msg, err := st.recv()
	if err != nil {
		return nil, err
	}
	if res, ok := immediateResult(msg); ok {
		return res, nil
	}
	hr := msg.GetRequestHeaders()
	if hr == nil {
		return nil, invariant("expected the request headers answer, got %T", msg.GetResponse())
	}
	decidedAt := time.Now()
	res, err := decisionResult(hr.GetResponse(), msg.GetDynamicMetadata())
	if err != nil || req.Body == nil {
		return res, err
	}
	res.decidedAt = decidedAt
	return res, st.readEcho(req, res)
}

// readEcho collects the streamed body answers until end_of_stream and checks them against the body sent.
func (st *Stream) readEcho(req Request, res *Result) error {
	body := req.Body
	res.BodyEcho = make([]byte, 0, len(body))
	for {
		msg, err := st.recv()
		if err != nil {
			return err
		}
		sb := msg.GetRequestBody().GetResponse().GetBodyMutation().GetStreamedResponse()
		if sb == nil {
			return invariant("expected a streamed request body answer, got %T", msg.GetResponse())
		}
		if len(sb.GetBody()) > maxChunk {
			return invariant("body chunk of %d bytes exceeds %d", len(sb.GetBody()), maxChunk)
		}
		res.BodyEcho = append(res.BodyEcho, sb.GetBody()...)
		res.EchoChunkSizes = append(res.EchoChunkSizes, len(sb.GetBody()))
		if sb.GetEndOfStream() {
			break
		}
	}
	return checkEcho(req, res)
}

// checkEcho holds the picker to returning the body it was sent, unless the request asked for a model rewrite;
// a content-length it sets must match what it returned.
func checkEcho(req Request, res *Result) error {
	if cl, ok := res.Headers["content-length"]; ok && cl != strconv.Itoa(len(res.BodyEcho)) {
		return invariant("content-length %s but %d body bytes returned", cl, len(res.BodyEcho))
	}
	rewrite := req.Headers["x-llm-d-model-name-rewrite"] != "" || req.Headers["x-gateway-model-name-rewrite"] != ""
	if !bytes.Equal(res.BodyEcho, req.Body) && !rewrite {
		return invariant("body echo differs: sent %d bytes, got %d back", len(req.Body), len(res.BodyEcho))
	}
	return nil
}

// routeBuffered sends the headers, waits for their answer, then sends the whole body and reads the decision from
// the body answer (as BUFFERED mode does).
func (st *Stream) routeBuffered(req Request) (*Result, error) {
	if err := st.ps.Send(headersMessage(req)); err != nil {
		return nil, fmt.Errorf("envoyclient: send: %w", err)
	}
	msg, err := st.recv()
	if err != nil {
		return nil, err
	}
	if res, ok := immediateResult(msg); ok {
		return res, nil
	}
	if req.Body == nil {
		return decisionResult(msg.GetRequestHeaders().GetResponse(), msg.GetDynamicMetadata())
	}
	if msg.GetRequestHeaders() == nil {
		return nil, invariant("expected the request headers answer, got %T", msg.GetResponse())
	}
	if err := st.ps.Send(bodyMessage(false, req.Body, true)); err != nil {
		return nil, fmt.Errorf("envoyclient: send: %w", err)
	}
	sentAt := time.Now()
	if msg, err = st.recv(); err != nil {
		return nil, err
	}
	decided := time.Since(sentAt)
	if res, ok := immediateResult(msg); ok {
		return res, nil
	}
	if msg.GetRequestBody() == nil {
		return nil, invariant("expected the request body answer, got %T", msg.GetResponse())
	}
	res, err := decisionResult(msg.GetRequestBody().GetResponse(), msg.GetDynamicMetadata())
	if res != nil {
		res.DecisionLatency = decided
		res.BodyMutation = msg.GetRequestBody().GetResponse().GetBodyMutation().GetBody()
	}
	return res, err
}

// decisionResult reads the decision and checks that header and metadata agree.
func decisionResult(common *extprocv3.CommonResponse, md *structpb.Struct) (*Result, error) {
	res := &Result{Headers: map[string]string{}, ClearRouteCache: common.GetClearRouteCache()}
	for _, h := range common.GetHeaderMutation().GetSetHeaders() {
		res.Headers[strings.ToLower(h.GetHeader().GetKey())] = headerValue(h.GetHeader())
	}
	res.Header = res.Headers[headerDestination]
	res.Metadata = md.GetFields()[metadataNamespace].GetStructValue().GetFields()[keyDestination].GetStringValue()
	if res.Header == "" {
		return nil, invariant("no %s header in the decision", headerDestination)
	}
	if res.Header != res.Metadata {
		return nil, invariant("header %q != metadata %q", res.Header, res.Metadata)
	}
	if !res.ClearRouteCache {
		return nil, invariant("clear_route_cache not set")
	}
	res.Endpoints = strings.Split(res.Header, ",")
	return res, nil
}

func immediateResult(msg *extprocv3.ProcessingResponse) (*Result, bool) {
	ir := msg.GetImmediateResponse()
	if ir == nil {
		return nil, false
	}
	res := &Result{Status: int(ir.GetStatus().GetCode()), ImmediateBody: ir.GetBody(), Headers: map[string]string{}}
	for _, h := range ir.GetHeaders().GetSetHeaders() {
		res.Headers[strings.ToLower(h.GetHeader().GetKey())] = headerValue(h.GetHeader())
	}
	return res, true
}

func headerValue(h *corev3.HeaderValue) string {
	if raw := h.GetRawValue(); len(raw) > 0 {
		return string(raw)
	}
	return h.GetValue()
}

package extproc

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	extprocv3 "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"

	"github.com/kvpick/kvpick/pkg/request"
	"github.com/kvpick/kvpick/pkg/route"
	"github.com/kvpick/kvpick/pkg/telemetry"
)

// responseState follows the upstream response of a routed request.
type responseState struct {
	gotHeaders bool
	status     int
	scanner    *request.StreamScanner // nil unless the response is a 2xx
	sse        bool                   // the response streams (text/event-stream): its first token is timed
	servedSeen bool
	firstToken bool
	tokens     int
	ended      bool
}

// outcomeErr is the Done error the response status implies.
func (r *responseState) outcomeErr() error {
	if r.status >= 500 {
		return fmt.Errorf("upstream status %d", r.status)
	}
	return nil
}

// onResponseHeaders notes the status and content type and passes the headers through.
func (st *stream) onResponseHeaders(h *extprocv3.HttpHeaders) error {
	if st.dec == nil || st.resp.gotHeaders {
		return protocolError("response headers without a routed request")
	}
	st.resp.gotHeaders = true
	hs := headerMap(h.GetHeaders())
	st.resp.status, _ = strconv.Atoi(hs[":status"])
	if st.resp.status >= 200 && st.resp.status < 300 {
		st.resp.sse = strings.HasPrefix(hs["content-type"], "text/event-stream")
		st.resp.scanner = request.NewStreamScanner(st.resp.sse)
	}
	if err := st.send(&extprocv3.ProcessingResponse{Response: &extprocv3.ProcessingResponse_ResponseHeaders{
		ResponseHeaders: &extprocv3.HeadersResponse{}}}); err != nil {
		return err
	}
	if h.GetEndOfStream() {
		st.endResponse()
	}
	return nil
}

// onResponseBody passes a chunk through (echoed in streamed mode) and then scans it for the lifecycle.
func (st *stream) onResponseBody(b *extprocv3.HttpBody) error {
	if !st.resp.gotHeaders || st.resp.ended {
		return protocolError("response body outside the response")
	}
	if err := st.passResponseBody(b); err != nil {
		return err
	}
	if st.resp.scanner != nil {
		st.apply(st.resp.scanner.Feed(b.GetBody()))
	}
	if b.GetEndOfStream() {
		st.endResponse()
	}
	return nil
}

// passResponseBody answers a response chunk: echoed in pieces of at most ChunkBytes in streamed mode, a plain
// continue otherwise.
func (st *stream) passResponseBody(b *extprocv3.HttpBody) error {
	if !st.respStreamed() {
		return st.send(&extprocv3.ProcessingResponse{Response: &extprocv3.ProcessingResponse_ResponseBody{
			ResponseBody: &extprocv3.BodyResponse{}}})
	}
	body, size := b.GetBody(), st.s.opts.ChunkBytes
	for len(body) > size {
		if err := st.send(streamedBody(false, body[:size], false)); err != nil {
			return err
		}
		body = body[size:]
	}
	return st.send(streamedBody(false, body, b.GetEndOfStream()))
}

// onResponseTrailers ends the response and passes the trailers through.
func (st *stream) onResponseTrailers() error {
	if !st.resp.gotHeaders {
		return protocolError("response trailers before response headers")
	}
	st.endResponse()
	return st.send(&extprocv3.ProcessingResponse{Response: &extprocv3.ProcessingResponse_ResponseTrailers{
		ResponseTrailers: &extprocv3.TrailersResponse{}}})
}

// endResponse flushes the scanner and ends the request.
func (st *stream) endResponse() {
	if st.resp.ended {
		return
	}
	st.resp.ended = true
	if st.resp.scanner != nil {
		st.apply(st.resp.scanner.Finish())
	}
	err := st.resp.outcomeErr()
	st.finish(err, outcomeFor(err), st.resp.status)
}

// apply forwards scanner events to the Decision.
func (st *stream) apply(ev request.Events) {
	if st.ended {
		return
	}
	if ev.FirstToken && !st.resp.firstToken {
		st.resp.firstToken = true
		if end, ok := st.dec.(route.FirstTokenAtEnd); ok && !st.resp.sse {
			end.FirstTokenAtEnd()
		} else {
			st.dec.FirstToken()
		}
		telemetry.ExtprocTTFT.WithLabelValues(st.model).Observe(time.Since(st.start).Seconds())
		telemetry.CompatFirstToken(st.model, time.Since(st.start))
	}
	if ev.CompletionTokensTotal > st.resp.tokens {
		st.resp.tokens = ev.CompletionTokensTotal
		st.dec.Progress(ev.CompletionTokensTotal)
	}
	if ev.Usage != nil {
		st.dec.Usage(*ev.Usage)
		telemetry.CompatUsage(st.model, ev.Usage.PromptTokens, ev.Usage.CompletionTokens)
	}
}

// respStreamed reports whether response bodies must be echoed (FULL_DUPLEX_STREAMED). Without protocol_config the
// response is assumed to use the request's mode.
func (st *stream) respStreamed() bool {
	switch st.respMode {
	case modeStreamed:
		return true
	case modeUnknown:
		return st.reqMode != modeBuffered && !st.headersAnswered
	}
	return false
}

package extproc

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	extprocv3 "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"

	"github.com/kvpick/kvpick/pkg/apierr"
	"github.com/kvpick/kvpick/pkg/request"
)

// onRequestHeaders records the request line and headers. A body-less request is routed here; a request with a
// body waits for it, except that declared oversize bodies are refused at once.
func (st *stream) onRequestHeaders(h *extprocv3.HttpHeaders) error {
	if st.gotHeaders {
		return protocolError("request headers received twice")
	}
	st.gotHeaders = true
	st.headers = headerMap(h.GetHeaders())
	resolveAliases(st.headers)
	st.path, st.kind = requestPath(st.headers) // a path with no parser is routed by load alone
	if h.GetEndOfStream() || st.reqMode == modeNone {
		st.bodyDone = true
		return st.routeHeadersOnly()
	}
	if n, err := strconv.ParseInt(st.headers["content-length"], 10, 64); err == nil && n > st.s.opts.MaxBodyBytes {
		return st.reject(st.tooLarge())
	}
	if st.reqMode == modeBuffered {
		st.headersAnswered = true
		return st.send(headersContinue())
	}
	return nil // streamed: the headers response waits for the decision
}

// routeHeadersOnly routes a request without a body and answers in the headers response.
func (st *stream) routeHeadersOnly() error {
	st.inputEnd = time.Now()
	if ok, err := st.route(nil); !ok {
		return err
	}
	return st.commit(st.send(st.decisionResponse(false, -1)))
}

// onRequestBody accumulates the body (bounded by MaxBodyBytes) and routes at its end.
func (st *stream) onRequestBody(b *extprocv3.HttpBody) error {
	if !st.gotHeaders || st.bodyDone {
		return protocolError("request body outside the request")
	}
	if int64(len(st.body))+int64(len(b.GetBody())) > st.s.opts.MaxBodyBytes {
		return st.reject(st.tooLarge())
	}
	st.appendBody(b.GetBody())
	if b.GetEndOfStream() {
		return st.finishBody(true)
	}
	if st.headersAnswered { // non-duplex modes expect an answer per chunk
		return st.send(bodyContinue())
	}
	return nil
}

// appendBody collects a chunk into a pooled buffer, sized once to the declared content length when there is one.
func (st *stream) appendBody(chunk []byte) {
	if st.body == nil {
		n, _ := strconv.Atoi(st.headers["content-length"])
		st.body = getBody(min(int64(max(n, len(chunk))), st.s.opts.MaxBodyBytes))
	}
	st.body = append(st.body, chunk...)
}

// onRequestTrailers ends the body when trailers close the request, then passes the trailers through.
func (st *stream) onRequestTrailers() error {
	if !st.gotHeaders {
		return protocolError("request trailers before headers")
	}
	if !st.bodyDone {
		if err := st.finishBody(false); err != nil || st.closed {
			return err
		}
	}
	return st.send(&extprocv3.ProcessingResponse{Response: &extprocv3.ProcessingResponse_RequestTrailers{
		RequestTrailers: &extprocv3.TrailersResponse{}}})
}

// finishBody parses and routes the complete body, then answers: in streamed mode the headers response followed by
// the body echoed in chunks; in buffered mode a body response carrying the decision.
func (st *stream) finishBody(eos bool) error {
	st.bodyDone, st.inputEnd = true, time.Now()
	req, err := st.parseBody()
	if err != nil {
		return st.reject(err)
	}
	if ok, err := st.route(req); !ok {
		return err
	}
	if st.headersAnswered {
		return st.commit(st.send(st.decisionResponse(true, -1)))
	}
	if err := st.send(st.decisionResponse(false, len(st.body))); err != nil {
		return err
	}
	return st.commit(st.echoBody(eos))
}

// parseBody parses a body of a known API (nil for others: they are routed by load alone) and applies the
// gateway's model rewrite to the parsed request and to the body the picker hands on.
func (st *stream) parseBody() (*request.Request, error) {
	if st.kind == request.KindUnknown {
		return nil, nil
	}
	st.prompt = getPrompt()
	req, err := request.ParseInto(st.kind, st.body, st.prompt)
	if err != nil {
		return nil, err
	}
	if m := st.headers[HeaderModelRewrite]; m != "" && m != req.Model {
		body, err := request.WithModel(req, m)
		if err != nil {
			return nil, err
		}
		putBody(st.body)
		st.body, req.Raw, st.rewritten = body, body, true
	}
	return req, nil
}

// commit lets the Decision do its bookkeeping once the answer went out without error (sendErr nil), so that work
// is not on the request's path; a failed send leaves the stream to abort (Done only).
func (st *stream) commit(sendErr error) error {
	if sendErr == nil && st.dec != nil && !st.ended {
		// No runtime.Gosched before Commit: it was meant to let gRPC's writer send the answer before the
		// bookkeeping, but measured with a 20 µs Commit (1 and 2 Ps) it bought nothing (issue 9.9).
		st.dec.Commit()
	}
	return sendErr
}

// echoBody returns the body to the proxy in chunks of at most ChunkBytes.
func (st *stream) echoBody(eos bool) error {
	size := st.s.opts.ChunkBytes
	if len(st.body) == 0 && eos {
		return st.send(streamedBody(true, nil, true))
	}
	for off := 0; off < len(st.body); off += size {
		end := min(off+size, len(st.body))
		if err := st.send(streamedBody(true, st.body[off:end], eos && end == len(st.body))); err != nil {
			return err
		}
	}
	return nil
}

// reject answers with an immediate response built from err and ends the exchange.
func (st *stream) reject(err error) error {
	code, body := apierr.Response(err)
	st.closed, st.ended = true, true
	countRequest(st.model, st.s.opts.Mode, outcomeRejected, code) // "" when the body never parsed
	st.logReject(code, err)
	return st.send(immediate(code, body, apierr.As(err).Type))
}

func (st *stream) tooLarge() error {
	return apierr.New(http.StatusRequestEntityTooLarge, apierr.TypeTooLarge,
		"request body exceeds the limit of %d bytes", st.s.opts.MaxBodyBytes)
}

// headerMap flattens Envoy's header list: lower-case names, raw values preferred.
func headerMap(hm *corev3.HeaderMap) map[string]string {
	hs := hm.GetHeaders()
	m := make(map[string]string, len(hs))
	for _, h := range hs {
		v := h.GetValue()
		if raw := h.GetRawValue(); len(raw) > 0 {
			v = string(raw)
		}
		m[strings.ToLower(h.GetKey())] = v
	}
	return m
}

func stripQuery(p string) string {
	if i := strings.IndexAny(p, "?#"); i >= 0 {
		return p[:i]
	}
	return p
}

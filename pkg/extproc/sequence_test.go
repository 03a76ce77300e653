package extproc

import (
	"context"
	"strings"
	"testing"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	filterv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ext_proc/v3"
	extprocv3 "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"
	"github.com/kvpick/kvpick/pkg/route"
	"google.golang.org/protobuf/types/known/structpb"
)

// Raw message sequences through Process over an in-memory stream: what envoyclient does not exercise.

func reqHeaders(path string, eos bool) *extprocv3.ProcessingRequest {
	hm := &corev3.HeaderMap{Headers: []*corev3.HeaderValue{{Key: ":path", RawValue: []byte(path)}, {Key: ":method", Value: "POST"}}}
	return &extprocv3.ProcessingRequest{Request: &extprocv3.ProcessingRequest_RequestHeaders{
		RequestHeaders: &extprocv3.HttpHeaders{Headers: hm, EndOfStream: eos}}}
}

func withMode(m *extprocv3.ProcessingRequest, req, resp filterv3.ProcessingMode_BodySendMode) *extprocv3.ProcessingRequest {
	m.ProtocolConfig = &extprocv3.ProtocolConfiguration{RequestBodyMode: req, ResponseBodyMode: resp}
	return m
}

func reqBody(b string, eos bool) *extprocv3.ProcessingRequest {
	return &extprocv3.ProcessingRequest{Request: &extprocv3.ProcessingRequest_RequestBody{
		RequestBody: &extprocv3.HttpBody{Body: []byte(b), EndOfStream: eos}}}
}

func respHeaders(status string, eos bool) *extprocv3.ProcessingRequest {
	hm := &corev3.HeaderMap{Headers: []*corev3.HeaderValue{{Key: ":status", RawValue: []byte(status)}}}
	return &extprocv3.ProcessingRequest{Request: &extprocv3.ProcessingRequest_ResponseHeaders{
		ResponseHeaders: &extprocv3.HttpHeaders{Headers: hm, EndOfStream: eos}}}
}

func respBody(b string, eos bool) *extprocv3.ProcessingRequest {
	return &extprocv3.ProcessingRequest{Request: &extprocv3.ProcessingRequest_ResponseBody{
		ResponseBody: &extprocv3.HttpBody{Body: []byte(b), EndOfStream: eos}}}
}

var (
	reqTrailers  = &extprocv3.ProcessingRequest{Request: &extprocv3.ProcessingRequest_RequestTrailers{RequestTrailers: &extprocv3.HttpTrailers{}}}
	respTrailers = &extprocv3.ProcessingRequest{Request: &extprocv3.ProcessingRequest_ResponseTrailers{ResponseTrailers: &extprocv3.HttpTrailers{}}}
)

// kinds names the answers in order: H (request headers), B (request body), I (immediate), T (request trailers),
// h, b, t (response phases).
func kinds(sent []*extprocv3.ProcessingResponse) string {
	var sb strings.Builder
	for _, r := range sent {
		switch r.GetResponse().(type) {
		case *extprocv3.ProcessingResponse_RequestHeaders:
			sb.WriteByte('H')
		case *extprocv3.ProcessingResponse_RequestBody:
			sb.WriteByte('B')
		case *extprocv3.ProcessingResponse_ImmediateResponse:
			sb.WriteByte('I')
		case *extprocv3.ProcessingResponse_RequestTrailers:
			sb.WriteByte('T')
		case *extprocv3.ProcessingResponse_ResponseHeaders:
			sb.WriteByte('h')
		case *extprocv3.ProcessingResponse_ResponseBody:
			sb.WriteByte('b')
		case *extprocv3.ProcessingResponse_ResponseTrailers:
			sb.WriteByte('t')
		}
	}
	return sb.String()
}

func TestMessageSequences(t *testing.T) {
	body := string(completion("m", "hello"))
	full := filterv3.ProcessingMode_FULL_DUPLEX_STREAMED
	tests := []struct {
		name    string
		msgs    []*extprocv3.ProcessingRequest
		want    string // answer kinds
		wantErr bool
		done    int // Done calls expected on the (single) decision; -1 = no decision
	}{
		{"streamed, trailers end the body", []*extprocv3.ProcessingRequest{
			reqHeaders("/v1/completions", false), reqBody(body[:5], false), reqBody(body[5:], false), reqTrailers,
			respHeaders("200", false), respBody("{}", false), respTrailers}, "HBThbt", false, 1},
		{"no protocol_config = streamed", []*extprocv3.ProcessingRequest{
			reqHeaders("/v1/completions", false), reqBody(body, true), respHeaders("200", false), respBody("x", true)},
			"HBhb", false, 1},
		{"buffered via protocol_config", []*extprocv3.ProcessingRequest{
			withMode(reqHeaders("/v1/completions", false), filterv3.ProcessingMode_BUFFERED, filterv3.ProcessingMode_NONE),
			reqBody(body, true), respHeaders("200", true)}, "HBh", false, 1},
		{"non-duplex STREAMED answers each chunk", []*extprocv3.ProcessingRequest{
			withMode(reqHeaders("/v1/completions", false), filterv3.ProcessingMode_STREAMED, filterv3.ProcessingMode_STREAMED),
			reqBody(body[:4], false), reqBody(body[4:], true)}, "HBB", false, 1},
		{"NONE body mode routes at headers", []*extprocv3.ProcessingRequest{
			withMode(reqHeaders("/v1/completions", false), filterv3.ProcessingMode_NONE, filterv3.ProcessingMode_NONE)},
			"H", false, 1},
		{"duplex config, response echoed", []*extprocv3.ProcessingRequest{
			withMode(reqHeaders("/v1/completions", false), full, full), reqBody(body, true),
			respHeaders("200", false), respBody("a", false), respBody("", true)}, "HBhbb", false, 1},
		{"body before headers", []*extprocv3.ProcessingRequest{reqBody(body, true)}, "", true, -1},
		{"headers twice", []*extprocv3.ProcessingRequest{reqHeaders("/v1/completions", false), reqHeaders("/v1/completions", false)}, "", true, -1},
		{"response before decision", []*extprocv3.ProcessingRequest{reqHeaders("/v1/completions", false), respHeaders("200", false)}, "", true, -1},
		{"body after end", []*extprocv3.ProcessingRequest{reqHeaders("/v1/models", true), reqBody("x", true)}, "H", true, 1},
		{"response body twice after end", []*extprocv3.ProcessingRequest{reqHeaders("/v1/models", true), respHeaders("200", true), respBody("x", true)}, "Hh", true, 1},
		{"empty message ignored", []*extprocv3.ProcessingRequest{{}, reqHeaders("/v1/models", true)}, "H", false, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newFakeRouter("10.0.0.1:8000")
			ms := newMemStream(tc.msgs...)
			err := NewServer(r, Options{}).Process(ms)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			if got := kinds(ms.sent); got != tc.want {
				t.Fatalf("answers %q, want %q", got, tc.want)
			}
			ds := r.allDecisions()
			if tc.done < 0 && len(ds) != 0 || tc.done >= 0 && (len(ds) != 1 || ds[0].state().doneCalls != tc.done) {
				t.Fatalf("decisions %d", len(ds))
			}
		})
	}
}

func TestObservabilityModeSendsNothing(t *testing.T) {
	h := reqHeaders("/v1/models", true)
	h.ObservabilityMode = true
	ms := newMemStream(h, respHeaders("200", true))
	if err := NewServer(newFakeRouter("10.0.0.1:8000"), Options{}).Process(ms); err != nil || len(ms.sent) != 0 {
		t.Fatalf("err %v, sent %d", err, len(ms.sent))
	}
}

func TestSubsetHintShapes(t *testing.T) {
	tests := []struct {
		name    string
		value   *structpb.Value
		want    []string
		present bool
	}{
		{"list", structpb.NewListValue(&structpb.ListValue{Values: []*structpb.Value{structpb.NewStringValue("a:1"), structpb.NewStringValue("b:2")}}), []string{"a:1", "b:2"}, true},
		{"comma string", structpb.NewStringValue(" a:1, b:2,,"), []string{"a:1", "b:2"}, true},
		{"list of comma strings", structpb.NewListValue(&structpb.ListValue{Values: []*structpb.Value{structpb.NewStringValue("a:1,b:2")}}), []string{"a:1", "b:2"}, true},
		{"empty string", structpb.NewStringValue(""), []string{}, true},
		{"wrong type", structpb.NewNumberValue(3), []string{}, true},
		{"absent", nil, nil, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ns := &structpb.Struct{Fields: map[string]*structpb.Value{}}
			if tc.value != nil {
				ns.Fields[SubsetKey] = tc.value
			}
			got, present := subsetHint(ns)
			if present != tc.present || strings.Join(got, "|") != strings.Join(tc.want, "|") || (present && got == nil) {
				t.Fatalf("subsetHint = %q %v, want %q %v", got, present, tc.want, tc.present)
			}
		})
	}
}

func TestSendFailureEndsDecision(t *testing.T) {
	r := newFakeRouter("10.0.0.1:8000")
	ms := newMemStream(reqHeaders("/v1/completions", false), reqBody(string(completion("m", "p")), true))
	ms.failAfter = 1 // the headers answer goes out, the body echo fails
	if err := NewServer(r, Options{}).Process(ms); err == nil {
		t.Fatal("send failure not reported")
	}
	if d := r.allDecisions()[0].state(); d.doneCalls != 1 || d.doneErr == nil {
		t.Fatalf("lifecycle = %+v", d)
	}
}

func TestRecvErrorEndsDecision(t *testing.T) {
	r := newFakeRouter("10.0.0.1:8000")
	ms := newMemStream(reqHeaders("/v1/models", true), respHeaders("200", false))
	ms.recvErr = context.Canceled
	if err := NewServer(r, Options{}).Process(ms); err == nil {
		t.Fatal("recv error not returned")
	}
	if d := r.allDecisions()[0].state(); d.doneCalls != 1 || d.doneErr == nil {
		t.Fatalf("lifecycle = %+v", d)
	}
}

func TestLargeResponseChunkSplit(t *testing.T) {
	r := newFakeRouter("10.0.0.1:8000")
	big := strings.Repeat("z", 250)
	ms := newMemStream(reqHeaders("/v1/models", true), respHeaders("200", false), respBody(big, true))
	if err := NewServer(r, Options{ChunkBytes: 100}).Process(ms); err != nil {
		t.Fatal(err)
	}
	if got := kinds(ms.sent); got != "Hhbbb" {
		t.Fatalf("answers %q", got)
	}
	var echo string
	for i, resp := range ms.sent[2:] {
		sb := resp.GetResponseBody().GetResponse().GetBodyMutation().GetStreamedResponse()
		if len(sb.GetBody()) > 100 || sb.GetEndOfStream() != (i == 2) {
			t.Fatalf("piece %d: %d bytes eos=%v", i, len(sb.GetBody()), sb.GetEndOfStream())
		}
		echo += string(sb.GetBody())
	}
	if echo != big {
		t.Fatal("response echo differs")
	}
}

type panicRouter struct{}

func (panicRouter) Route(context.Context, *route.Input) (route.Decision, error) { panic("router bug") }

func TestRouterPanicFailsTheStreamOnly(t *testing.T) {
	ms := newMemStream(reqHeaders("/v1/models", true))
	if err := NewServer(panicRouter{}, Options{}).Process(ms); err == nil {
		t.Fatal("panic not reported as an error")
	}
}

package extproc

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/kvpick/kvpick/pkg/apierr"
	"github.com/kvpick/kvpick/pkg/extproc/envoyclient"
)

func TestErrorResponses(t *testing.T) {
	big := completion("m", strings.Repeat("x", 3000))
	tests := []struct {
		name      string
		req       envoyclient.Request
		routerErr error
		limit     int64
		status    int
		typ       string
		msgHas    string
	}{
		{"malformed json", streamedReq([]byte(`{"model":"m","prompt":`), 4), nil, 0, 400, apierr.TypeInvalidRequest, ""},
		{"missing model", streamedReq([]byte(`{"prompt":"hi"}`)), nil, 0, 400, apierr.TypeInvalidRequest, "model"},
		{"too large streamed", streamedReq(big, 1000), nil, 2048, 413, apierr.TypeTooLarge, "2048"},
		{"too large buffered", envoyclient.Request{Path: "/v1/completions", Body: big, Mode: envoyclient.Buffered}, nil, 2048, 413, apierr.TypeTooLarge, "2048"},
		{"no endpoints", streamedReq(completion("m", "p")), apierr.Unavailable("no ready endpoint"), 0, 503, apierr.TypeUnavailable, "no ready"},
		{"overloaded", streamedReq(completion("m", "p")), apierr.New(503, apierr.TypeOverloaded, "all eligible endpoints are overloaded"), 0, 503, apierr.TypeOverloaded, "overloaded"},
		{"admission", streamedReq(completion("m", "p")), apierr.New(429, apierr.TypeQueueFull, "queue full"), 0, 429, apierr.TypeQueueFull, ""},
		{"invalid override", streamedReq(completion("m", "p")), apierr.BadRequest("endpoint override 1.2.3.4:5 not in pool"), 0, 400, apierr.TypeInvalidRequest, "override"},
		{"unknown model", streamedReq(completion("m", "p")), apierr.NotFound("model %q not served", "m"), 0, 404, apierr.TypeNotFound, "not served"},
		{"internal", streamedReq(completion("m", "p")), fmt.Errorf("db: %w", errBoom), 0, 500, apierr.TypeInternal, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newFakeRouter("10.0.0.1:8000")
			r.err = tc.routerErr
			h := startHarness(t, r, Options{MaxBodyBytes: tc.limit}, nil, nil)
			st, res, err := h.client.Route(testCtx(t), tc.req)
			if err != nil {
				t.Fatal(err)
			}
			if err := st.Close(); err != nil {
				t.Fatal(err)
			}
			if res.Status != tc.status || res.Headers["content-type"] != "application/json" {
				t.Fatalf("status %d headers %v, want %d json", res.Status, res.Headers, tc.status)
			}
			if res.Headers[HeaderDroppedReason] != tc.typ {
				t.Fatalf("%s = %q, want %q", HeaderDroppedReason, res.Headers[HeaderDroppedReason], tc.typ)
			}
			typ, msg := errorBody(t, res.ImmediateBody)
			if typ != tc.typ || !strings.Contains(msg, tc.msgHas) {
				t.Fatalf("body type %q msg %q, want %q containing %q", typ, msg, tc.typ, tc.msgHas)
			}
			if tc.status == http.StatusInternalServerError && strings.Contains(string(res.ImmediateBody), "boom") {
				t.Fatal("internal cause leaked")
			}
		})
	}
}

func TestTooLargeDeclaredContentLength(t *testing.T) {
	h := startHarness(t, newFakeRouter("10.0.0.1:8000"), Options{MaxBodyBytes: 100}, nil, nil)
	req := streamedReq(completion("m", "p"))
	req.Headers = map[string]string{"content-length": "5000"}
	st, res, err := h.client.Route(testCtx(t), req)
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	if res.Status != 413 || len(h.router.allDecisions()) != 0 {
		t.Fatalf("status %d, decisions %d", res.Status, len(h.router.allDecisions()))
	}
}

// TestProtocolErrorKeepsItsCause: the proxy sees FailedPrecondition with the
// message, and code on this side can still branch on errProtocol.
func TestProtocolErrorKeepsItsCause(t *testing.T) {
	err := protocolError("request body before headers (%d bytes)", 12)
	if !errors.Is(err, errProtocol) {
		t.Fatalf("%v does not match errProtocol", err)
	}
	st, ok := status.FromError(err)
	if !ok || st.Code() != codes.FailedPrecondition || !strings.Contains(st.Message(), "12 bytes") {
		t.Fatalf("status %v ok %v", st, ok)
	}
}

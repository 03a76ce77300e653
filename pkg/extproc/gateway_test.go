package extproc

import (
	"encoding/json"
	"strconv"
	"testing"

	"github.com/kvpick/kvpick/pkg/extproc/envoyclient"
	"github.com/kvpick/kvpick/pkg/request"
)

// Paths: by suffix, from :path, x-original-path or x-forwarded-path; paths
// with no parser are routed by load alone (no parsed request), not refused.
func TestGatewayPaths(t *testing.T) {
	body := completion("m", "hello")
	cases := []struct {
		name     string
		req      envoyclient.Request
		wantKind request.Kind // KindUnknown: routed without a parsed request
		wantPath string
	}{
		{"prefixed api path", envoyclient.Request{Method: "POST", Path: "/openai/v1/completions", Body: body}, request.KindCompletions, "/openai/v1/completions"},
		{"x-original-path after a rewrite", envoyclient.Request{Method: "POST", Path: "/rewritten", Body: body,
			Headers: map[string]string{"x-original-path": "/v1/completions"}}, request.KindCompletions, "/v1/completions"},
		{"x-forwarded-path", envoyclient.Request{Method: "POST", Path: "/rewritten", Body: body,
			Headers: map[string]string{"x-forwarded-path": "/gw/v1/completions"}}, request.KindCompletions, "/gw/v1/completions"},
		{"anthropic messages by load", envoyclient.Request{Method: "POST", Path: "/v1/messages", Body: []byte(`{"model":"m","messages":[]}`)},
			request.KindUnknown, "/v1/messages"},
		{"tokenize by load", envoyclient.Request{Method: "POST", Path: "/tokenize", Body: []byte(`not json at all`)}, request.KindUnknown, "/tokenize"},
		{"unknown path without body", envoyclient.Request{Method: "GET", Path: "/healthz"}, request.KindUnknown, "/healthz"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newFakeRouter("10.0.0.1:8000")
			h := startHarness(t, r, Options{}, nil, nil)
			st, res, err := h.client.Route(testCtx(t), tc.req)
			if err != nil {
				t.Fatal(err)
			}
			st.Close()
			if res.Status != 0 || len(res.Endpoints) != 1 {
				t.Fatalf("status %d endpoints %v body %s: want routed", res.Status, res.Endpoints, res.ImmediateBody)
			}
			in := r.lastInput()
			if in.Path != tc.wantPath {
				t.Fatalf("path %q, want %q", in.Path, tc.wantPath)
			}
			if (in.Request == nil) != (tc.wantKind == request.KindUnknown) || (in.Request != nil && in.Request.Kind != tc.wantKind) {
				t.Fatalf("request %+v, want kind %v", in.Request, tc.wantKind)
			}
			if tc.req.Body != nil && string(res.BodyEcho) != string(tc.req.Body) {
				t.Fatalf("body echoed as %q", res.BodyEcho)
			}
		})
	}
}

// The llm-d header names win over their x-gateway-* aliases; the Router sees
// the resolved value under both names.
func TestGatewayHeaderAliases(t *testing.T) {
	cases := []struct {
		name    string
		headers map[string]string
		want    string
	}{
		{"llm-d name", map[string]string{HeaderObjective: "critical"}, "critical"},
		{"alias only", map[string]string{HeaderObjectiveAlias: "batch"}, "batch"},
		{"both: llm-d wins", map[string]string{HeaderObjective: "critical", HeaderObjectiveAlias: "batch"}, "critical"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newFakeRouter("10.0.0.1:8000")
			h := startHarness(t, r, Options{}, nil, nil)
			req := streamedReq(completion("m", "p"))
			req.Headers = tc.headers
			st, _, err := h.client.Route(testCtx(t), req)
			if err != nil {
				t.Fatal(err)
			}
			st.Close()
			in := r.lastInput()
			if in.Headers[HeaderObjective] != tc.want || in.Headers[HeaderObjectiveAlias] != tc.want {
				t.Fatalf("objective %q / alias %q, want %q", in.Headers[HeaderObjective], in.Headers[HeaderObjectiveAlias], tc.want)
			}
		})
	}
}

// The model rewrite changes the model the Router sees and the body the
// gateway forwards, in streamed and buffered mode, with a matching length.
func TestGatewayModelRewrite(t *testing.T) {
	for _, mode := range []envoyclient.Mode{envoyclient.Streamed, envoyclient.Buffered} {
		for _, name := range []string{HeaderModelRewrite, HeaderModelRewriteAlias} {
			r := newFakeRouter("10.0.0.1:8000")
			h := startHarness(t, r, Options{}, nil, nil)
			req := envoyclient.Request{Method: "POST", Path: "/v1/completions", Body: completion("base", "p"), Mode: mode,
				Headers: map[string]string{name: "tuned-v2"}}
			st, res, err := h.client.Route(testCtx(t), req)
			if err != nil {
				t.Fatal(err)
			}
			st.Close()
			if in := r.lastInput(); in.Request == nil || in.Request.Model != "tuned-v2" {
				t.Fatalf("mode %v %s: router saw %+v", mode, name, in.Request)
			}
			forwarded := res.BodyEcho
			if mode == envoyclient.Buffered {
				forwarded = res.BodyMutation
			}
			var got struct{ Model string }
			if err := json.Unmarshal(forwarded, &got); err != nil || got.Model != "tuned-v2" {
				t.Fatalf("mode %v %s: forwarded body %q", mode, name, forwarded)
			}
			if cl := res.Headers["content-length"]; cl != strconv.Itoa(len(forwarded)) {
				t.Fatalf("mode %v %s: content-length %s for %d bytes", mode, name, cl, len(forwarded))
			}
		}
	}
}

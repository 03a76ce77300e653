package extproc

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	filterv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ext_proc/v3"
	extprocv3 "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"

	"github.com/kvpick/kvpick/pkg/extproc/envoyclient"
	"github.com/kvpick/kvpick/pkg/route"
)

func TestStreamedBodyChunking(t *testing.T) {
	prompt := `héllo 日本語 "quoted" \ back\slash é tab	end`
	body := completion("m1", prompt)
	rune3 := bytes.Index(body, []byte("日")) + 1    // inside a 3-byte rune
	escape := bytes.Index(body, []byte(`\"`)) + 1  // between '\' and '"'
	uEscape := bytes.Index(body, []byte(`\\`)) + 1 // inside an escaped backslash
	tests := []struct {
		name   string
		chunks []int
	}{
		{"one chunk", nil},
		{"one byte each", []int{1}},
		{"odd sizes", []int{3, 7, 2}},
		{"split inside a rune", []int{rune3, len(body)}},
		{"split inside an escape", []int{escape, len(body)}},
		{"split inside an escaped backslash", []int{uEscape, len(body)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := startHarness(t, newFakeRouter("10.0.0.1:8000", "10.0.0.2:8000"), Options{}, nil, nil)
			st, res, err := h.client.Route(testCtx(t), streamedReq(body, tc.chunks...))
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			if res.Status != 0 || res.Header != "10.0.0.1:8000" || res.Metadata != res.Header {
				t.Fatalf("result = %+v", res)
			}
			if !bytes.Equal(res.BodyEcho, body) {
				t.Fatalf("echo %q != body %q", res.BodyEcho, body)
			}
			if got := res.Headers["content-length"]; got != strconv.Itoa(len(body)) {
				t.Errorf("content-length = %q, want %d", got, len(body))
			}
			in := h.router.lastInput()
			if in.Request == nil || in.Request.Model != "m1" || !strings.Contains(string(in.Request.Prompt), "日本語") {
				t.Fatalf("router saw %+v", in.Request)
			}
			if in.Path != "/v1/completions" || in.Headers[":method"] != "POST" || in.SubsetPresent {
				t.Errorf("route input = %+v", in)
			}
		})
	}
}

func TestBufferedBody(t *testing.T) {
	h := startHarness(t, newFakeRouter("10.0.0.1:8000"), Options{}, nil, nil)
	body := completion("m1", "hello")
	st, res, err := h.client.Route(testCtx(t), envoyclient.Request{Path: "/v1/completions", Body: body, Mode: envoyclient.Buffered})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if res.Status != 0 || res.Header != "10.0.0.1:8000" || len(res.BodyEcho) != 0 {
		t.Fatalf("result = %+v", res)
	}
	if in := h.router.lastInput(); in.Request == nil || in.Request.Model != "m1" {
		t.Fatalf("router saw %+v", in.Request)
	}
}

func TestHeaderOnlyRequests(t *testing.T) {
	for _, mode := range []envoyclient.Mode{envoyclient.Streamed, envoyclient.Buffered} {
		h := startHarness(t, newFakeRouter("10.0.0.1:8000"), Options{}, nil, nil)
		st, res, err := h.client.Route(testCtx(t), envoyclient.Request{Method: "GET", Path: "/v1/models", Mode: mode})
		if err != nil {
			t.Fatal(err)
		}
		st.Close()
		in := h.router.lastInput()
		if res.Status != 0 || res.Header != "10.0.0.1:8000" || in.Request != nil || in.Path != "/v1/models" {
			t.Fatalf("mode %d: result %+v, input %+v", mode, res, in)
		}
	}
}

func TestOriginalPathWins(t *testing.T) {
	h := startHarness(t, newFakeRouter("10.0.0.1:8000"), Options{}, nil, nil)
	req := streamedReq(completion("m", "p"))
	req.Path = "/rewritten"
	req.Headers = map[string]string{"X-Original-Path": "/v1/completions?x=1"}
	st, res, err := h.client.Route(testCtx(t), req)
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	if res.Status != 0 || h.router.lastInput().Path != "/v1/completions?x=1" {
		t.Fatalf("status %d, path %q", res.Status, h.router.lastInput().Path)
	}
}

func TestSubsetHint(t *testing.T) {
	pool := []string{"10.0.0.1:8000", "10.0.0.2:8000", "10.0.0.3:8000"}
	tests := []struct {
		name    string
		subset  []string
		present bool
		want    string // "" = any endpoint of the pool
		status  int
	}{
		{"match", []string{"10.0.0.2:8000"}, true, "10.0.0.2:8000", 0},
		{"partial", []string{"10.0.0.9:8000", "10.0.0.3:8000"}, true, "10.0.0.3:8000", 0},
		{"none eligible", []string{"10.0.0.9:8000"}, true, "", 503},
		{"empty list", []string{}, true, "", 503},
		{"absent", nil, false, "", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := startHarness(t, newFakeRouter(pool...), Options{}, nil, nil)
			req := streamedReq(completion("m", "p"), 5)
			req.Subset, req.SubsetPresent = tc.subset, tc.present
			st, res, err := h.client.Route(testCtx(t), req)
			if err != nil {
				t.Fatal(err)
			}
			st.Close()
			in := h.router.lastInput()
			if in.SubsetPresent != tc.present || len(in.Subset) != len(tc.subset) {
				t.Fatalf("route input subset = %v present=%v", in.Subset, in.SubsetPresent)
			}
			if res.Status != tc.status {
				t.Fatalf("status %d, want %d (%s)", res.Status, tc.status, res.ImmediateBody)
			}
			if tc.status == 0 && tc.want != "" && res.Header != tc.want {
				t.Fatalf("picked %q, want %q", res.Header, tc.want)
			}
			if tc.status == 0 && tc.want == "" && !strings.HasPrefix(res.Header, "10.0.0.") {
				t.Fatalf("picked %q", res.Header)
			}
		})
	}
}

func TestFallbackListAndDecisionHeaders(t *testing.T) {
	r := newFakeRouter("10.0.0.1:8000", "10.0.0.2:8000", "10.0.0.3:8000")
	r.fallbacks = 2
	r.headers = []route.HeaderValue{{Key: "x-worker-instance-id", Value: "w-7"}, {Key: "x-dp-rank", Value: "1"}}
	h := startHarness(t, r, Options{}, nil, nil)
	for _, mode := range []envoyclient.Mode{envoyclient.Streamed, envoyclient.Buffered} {
		req := streamedReq(completion("m", "p"))
		req.Mode = mode
		st, res, err := h.client.Route(testCtx(t), req)
		if err != nil {
			t.Fatal(err)
		}
		st.Close()
		if len(res.Endpoints) != 3 || res.Header != strings.Join(res.Endpoints, ",") || res.Metadata != res.Header {
			t.Fatalf("mode %d: result = %+v", mode, res)
		}
		if res.Headers["x-worker-instance-id"] != "w-7" || res.Headers["x-dp-rank"] != "1" || !res.ClearRouteCache {
			t.Fatalf("mode %d: headers = %v", mode, res.Headers)
		}
	}
}

func TestLargeBodyEchoedInChunks(t *testing.T) {
	body := completion("m", longPrompt(55_000)) // ~220 KB
	for _, limit := range []int{0, 1000} {
		h := startHarness(t, newFakeRouter("10.0.0.1:8000"), Options{ChunkBytes: limit}, nil, nil)
		st, res, err := h.client.Route(testCtx(t), streamedReq(body, 16384, 1, 70000))
		if err != nil {
			t.Fatal(err) // the client checks the echo is byte-identical
		}
		st.Close()
		want := MaxChunkBytes
		if limit > 0 {
			want = limit
		}
		if len(res.EchoChunkSizes) < len(body)/want {
			t.Fatalf("%d chunks for %d bytes", len(res.EchoChunkSizes), len(body))
		}
		for _, n := range res.EchoChunkSizes {
			if n > want {
				t.Fatalf("chunk of %d bytes > %d", n, want)
			}
		}
		if !bytes.Equal(res.BodyEcho, body) {
			t.Fatal("echo differs")
		}
	}
}

// TestCommitAfterAnswer: the Decision is committed once, after every answer of the request phase went out (the
// headers response and the whole echo), and never when sending failed.
func TestCommitAfterAnswer(t *testing.T) {
	body := string(completion("m", longPrompt(40_000))) // echoed in several chunks
	full := filterv3.ProcessingMode_FULL_DUPLEX_STREAMED
	tests := []struct {
		name      string
		msgs      []*extprocv3.ProcessingRequest
		failAfter int
		commits   int
		sentFirst int // answers sent before Commit
	}{
		{"headers only", []*extprocv3.ProcessingRequest{reqHeaders("/v1/models", true)}, 0, 1, 1},
		{"streamed body", []*extprocv3.ProcessingRequest{
			withMode(reqHeaders("/v1/completions", false), full, full), reqBody(body, true)}, 0, 1, 4},
		{"buffered body", []*extprocv3.ProcessingRequest{
			withMode(reqHeaders("/v1/completions", false), filterv3.ProcessingMode_BUFFERED, full), reqBody(body, true)}, 0, 1, 2},
		{"echo fails", []*extprocv3.ProcessingRequest{
			withMode(reqHeaders("/v1/completions", false), full, full), reqBody(body, true)}, 2, 0, 2},
		{"decision send fails", []*extprocv3.ProcessingRequest{reqHeaders("/v1/models", true)}, -1, 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newFakeRouter("10.0.0.1:8000")
			ms := newMemStream(tc.msgs...)
			ms.failAfter = tc.failAfter
			var sentAtCommit int
			r.onCommit = func() { sentAtCommit = ms.nsent }
			_ = NewServer(r, Options{}).Process(ms)
			ds := r.allDecisions()
			if len(ds) != 1 {
				t.Fatalf("decisions %d", len(ds))
			}
			s := ds[0].state()
			if s.commits != tc.commits || s.doneCalls != 1 {
				t.Fatalf("commits %d done %d, want %d and 1", s.commits, s.doneCalls, tc.commits)
			}
			if tc.commits > 0 && sentAtCommit != tc.sentFirst {
				t.Fatalf("committed after %d answers, want %d", sentAtCommit, tc.sentFirst)
			}
		})
	}
}

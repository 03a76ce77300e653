package extproc

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/kvpick/kvpick/pkg/extproc/envoyclient"
)

var sseChunks = [][]byte{
	[]byte("data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"text\":\"Hel\"}]}\n\n"),
	[]byte("data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"text\":\"lo\"}]}\n\ndata: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"te"),
	[]byte("xt\":\"!\"}]}\n\ndata: {\"id\":\"c1\",\"choices\":[],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":3,\"total_tokens\":8}}\n\n"),
	[]byte("data: [DONE]\n\n"),
}

func TestResponseLifecycle(t *testing.T) {
	for _, mode := range []envoyclient.Mode{envoyclient.Streamed, envoyclient.Buffered} {
		h := startHarness(t, newFakeRouter("10.0.0.1:8000", "10.0.0.2:8000"), Options{}, nil, nil)
		req := streamedReq(completion("m", "p"), 7)
		req.Mode = mode
		ctx := testCtx(t)
		st, res, err := h.client.Route(ctx, req)
		if err != nil || res.Status != 0 {
			t.Fatalf("route: %v %+v", err, res)
		}
		if err := st.Respond(ctx, 200, "text/event-stream", "10.0.0.2:8000", sseChunks); err != nil {
			t.Fatal(err)
		}
		if err := st.Close(); err != nil {
			t.Fatal(err)
		}
		d := waitDone(t, h.router.allDecisions()[0])
		if d.doneCalls != 1 || d.doneErr != nil || d.firstToken != 1 || d.atEnd != 0 || d.served != "10.0.0.2:8000" ||
			d.commits != 1 || d.servedPre {
			t.Fatalf("mode %d: lifecycle = %+v", mode, d)
		}
		if len(d.usage) == 0 || d.usage[len(d.usage)-1].CompletionTokens != 3 {
			t.Fatalf("mode %d: usage = %+v", mode, d.usage)
		}
		// Three content deltas over three chunks: progress is the running total.
		if d.progress != 3 {
			t.Fatalf("mode %d: progress = %d, want 3", mode, d.progress)
		}
	}
}

func TestResponseStatusAndShapes(t *testing.T) {
	tests := []struct {
		name    string
		status  int
		chunks  [][]byte
		wantErr bool
	}{
		{"ok json", 200, [][]byte{[]byte(`{"choices":[{"text":"hi"}],"usage":{"completion_tokens":1}}`)}, false},
		{"headers only", 204, nil, false},
		{"client error", 400, [][]byte{[]byte(`{"error":{}}`)}, false},
		{"upstream 500", 500, [][]byte{[]byte("oops")}, true},
		{"upstream 503 headers only", 503, nil, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := startHarness(t, newFakeRouter("10.0.0.1:8000"), Options{}, nil, nil)
			ctx := testCtx(t)
			st, _, err := h.client.Route(ctx, streamedReq(completion("m", "p")))
			if err != nil {
				t.Fatal(err)
			}
			if err := st.Respond(ctx, tc.status, "application/json", "", tc.chunks); err != nil {
				t.Fatal(err)
			}
			st.Close()
			d := waitDone(t, h.router.allDecisions()[0])
			if d.doneCalls != 1 || (d.doneErr != nil) != tc.wantErr || d.served != "" {
				t.Fatalf("lifecycle = %+v", d)
			}
			// An error status tells the decision, before Done, that the engine cached none of the prompt.
			if want := tc.status >= 400; (d.refused == 1) != want || d.refused > 1 {
				t.Fatalf("status %d: Refused called %d times before Done, want %v", tc.status, d.refused, want)
			}
			// A JSON body's first token is its end: the prefill is done, but no time to first token to learn from.
			if tc.status == 200 && (d.firstToken != 1 || d.atEnd != 1) {
				t.Fatalf("non-streamed first token: %d, at the end %d; want 1 and 1", d.firstToken, d.atEnd)
			}
		})
	}
}

func TestCancellation(t *testing.T) {
	t.Run("mid response", func(t *testing.T) {
		h := startHarness(t, newFakeRouter("10.0.0.1:8000"), Options{}, nil, nil)
		ctx := testCtx(t)
		st, _, err := h.client.Route(ctx, streamedReq(completion("m", "p")))
		if err != nil {
			t.Fatal(err)
		}
		if err := st.SendResponseHeaders(200, "text/event-stream", "", false); err != nil {
			t.Fatal(err)
		}
		if _, err := st.SendResponseBody(sseChunks[0], false); err != nil {
			t.Fatal(err)
		}
		st.Abort()
		d := waitDone(t, h.router.allDecisions()[0])
		if d.doneCalls != 1 || d.doneErr == nil || d.firstToken != 1 {
			t.Fatalf("lifecycle = %+v", d)
		}
	})
	t.Run("before response", func(t *testing.T) {
		h := startHarness(t, newFakeRouter("10.0.0.1:8000"), Options{}, nil, nil)
		st, _, err := h.client.Route(testCtx(t), streamedReq(completion("m", "p")))
		if err != nil {
			t.Fatal(err)
		}
		st.Close() // the proxy ends the stream without a response phase
		d := waitDone(t, h.router.allDecisions()[0])
		if d.doneCalls != 1 || d.doneErr == nil {
			t.Fatalf("lifecycle = %+v", d)
		}
	})
	t.Run("while queued in Route", func(t *testing.T) {
		r := newFakeRouter("10.0.0.1:8000")
		r.block = true
		h := startHarness(t, r, Options{}, nil, nil)
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		if _, _, err := h.client.Route(ctx, streamedReq(completion("m", "p"))); err == nil {
			t.Fatal("route returned without error while the router blocks")
		}
		if len(r.allDecisions()) != 0 || r.lastInput().Request == nil {
			t.Fatalf("decisions %d, input %+v", len(r.allDecisions()), r.lastInput())
		}
	})
}

func TestConcurrentStreams(t *testing.T) {
	eps := []string{"10.0.0.1:8000", "10.0.0.2:8000", "10.0.0.3:8000", "10.0.0.4:8000", "10.0.0.5:8000"}
	h := startHarness(t, newFakeRouter(eps...), Options{}, nil, nil)
	const n = 50
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() { errs <- oneRoundTrip(testCtx(t), h.client, i) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	ds := h.router.allDecisions()
	if len(ds) != n {
		t.Fatalf("%d decisions, want %d", len(ds), n)
	}
	perEndpoint := map[string]int{}
	for _, d := range ds {
		s := waitDone(t, d)
		if s.doneCalls != 1 || s.doneErr != nil || s.firstToken != 1 {
			t.Fatalf("lifecycle = %+v", s)
		}
		perEndpoint[d.eps[0]]++
	}
	for _, ep := range eps {
		if perEndpoint[ep] != n/len(eps) {
			t.Fatalf("round robin spread = %v", perEndpoint)
		}
	}
}

func oneRoundTrip(ctx context.Context, c *envoyclient.Client, i int) error {
	st, res, err := c.Route(ctx, streamedReq(completion("m", fmt.Sprintf("prompt %d %s", i, longPrompt(200))), 100+i))
	if err != nil {
		return err
	}
	if res.Status != 0 {
		return fmt.Errorf("status %d", res.Status)
	}
	if err := st.Respond(ctx, 200, "text/event-stream", res.Endpoints[0], sseChunks); err != nil {
		return err
	}
	return st.Close()
}

package extproc

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	extprocv3 "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"
	"github.com/go-logr/logr"

	"github.com/kvpick/kvpick/internal/testutil"
	"github.com/kvpick/kvpick/pkg/extproc/envoyclient"
)

// BenchmarkDecisionStream is one full request over real gRPC on loopback with the fake router: headers + an
// 8,000-token prompt (~32 KB) streamed in 16 KB chunks and echoed, the decision, then response headers and three SSE
// chunks, each answered. p50/p99: the whole lifecycle; decision-p50/p99: last body byte to decision. The real
// router's figures are test/integration's BenchmarkRealDecision.
func BenchmarkDecisionStream(b *testing.B) {
	testutil.DefaultGC(b)
	for _, n := range []int{10, 100} {
		b.Run(fmt.Sprintf("endpoints=%d", n), func(b *testing.B) {
			eps := make([]string, n)
			for i := range eps {
				eps[i] = fmt.Sprintf("10.0.%d.%d:8000", i/250, i%250+1)
			}
			r := newFakeRouter(eps...)
			r.noRecord = true
			h := startHarness(b, r, Options{Log: logr.Discard()}, nil, nil)
			req := streamedReq(completion("m", longPrompt(8000)), 16384)
			ctx := testCtx(b)
			lat, decided := make([]time.Duration, 0, b.N), make([]time.Duration, 0, b.N)
			b.SetBytes(int64(len(req.Body)))
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				t0 := time.Now()
				res := roundTrip(b, h, ctx, req)
				lat, decided = append(lat, time.Since(t0)), append(decided, res.DecisionLatency)
			}
			testutil.ReportPercentiles(b, "", lat)
			testutil.ReportPercentiles(b, "decision-", decided)
		})
	}
}

// BenchmarkDecisionBody220KB is the picker's body handling alone (in-memory stream, no gRPC): accumulate a
// 220 KB prompt arriving in 16 KB chunks, parse it, route, and echo it in 62,000-byte chunks.
func BenchmarkDecisionBody220KB(b *testing.B) {
	body := completion("m", longPrompt(55_000))
	chunks := make([][]byte, 0, len(body)/16384+1)
	for off := 0; off < len(body); off += 16384 {
		chunks = append(chunks, body[off:min(off+16384, len(body))])
	}
	r := newFakeRouter("10.0.0.1:8000", "10.0.0.2:8000")
	r.noRecord = true
	srv := NewServer(r, Options{Log: logr.Discard()})
	msgs := make([]*extprocv3.ProcessingRequest, 0, len(chunks)+1)
	msgs = append(msgs, reqHeaders("/v1/completions", false))
	msgs[0].GetRequestHeaders().Headers.Headers = append(msgs[0].GetRequestHeaders().Headers.Headers,
		&corev3.HeaderValue{Key: "content-length", RawValue: []byte(strconv.Itoa(len(body)))})
	for i, c := range chunks {
		msgs = append(msgs, reqBody(string(c), i == len(chunks)-1))
	}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		ms := newMemStream(msgs...)
		ms.discard = true
		if err := srv.Process(ms); err != nil || ms.nsent < 5 {
			b.Fatalf("process: %v, %d answers", err, ms.nsent)
		}
	}
}

// roundTrip is one benchmark request: routed, answered with SSE chunks, closed.
func roundTrip(b *testing.B, h *harness, ctx context.Context, req envoyclient.Request) *envoyclient.Result {
	st, res, err := h.client.Route(ctx, req)
	if err != nil || res.Status != 0 {
		b.Fatalf("route: %v %+v", err, res)
	}
	if err := st.Respond(ctx, 200, "text/event-stream", res.Endpoints[0], sseChunks[1:]); err != nil {
		b.Fatal(err)
	}
	if err := st.Close(); err != nil {
		b.Fatal(err)
	}
	return res
}

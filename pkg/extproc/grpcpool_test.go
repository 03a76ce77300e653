package extproc

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/go-logr/logr"
	"google.golang.org/grpc/experimental"
	"google.golang.org/grpc/mem"

	"github.com/kvpick/kvpick/internal/testutil"
	"github.com/kvpick/kvpick/pkg/grpcbuf"
)

// fillGarbage puts buffers of every size up to 1 MB, filled with a pattern,
// into the shared pool, so the next messages are built in dirty memory.
func fillGarbage() {
	for size := 256; size <= 1<<20; size *= 2 {
		for range 8 {
			bp := grpcbuf.Shared.Get(size)
			for i := range *bp {
				(*bp)[i] = 0xA5
			}
			grpcbuf.Shared.Put(bp)
		}
	}
}

// TestTrafficThroughGarbagePool: the installed pool does not zero, so every
// message gRPC builds in it must overwrite what it reads. Requests of several
// sizes go through the real stream with the pool full of garbage; the router
// must see the exact prompt and the proxy the exact body and decision.
func TestTrafficThroughGarbagePool(t *testing.T) {
	h := startHarness(t, newFakeRouter("10.0.0.1:8000", "10.0.0.2:8000"), Options{Log: logr.Discard()}, nil, nil)
	for _, n := range []int{1, 300, 4000, 20000} {
		for _, chunk := range []int{0, 1000, 16384} {
			t.Run(fmt.Sprintf("tokens=%d/chunk=%d", n, chunk), func(t *testing.T) {
				fillGarbage()
				prompt := longPrompt(n)
				req := streamedReq(completion("m", prompt))
				if chunk > 0 {
					req = streamedReq(completion("m", prompt), chunk)
				}
				ctx := testCtx(t)
				st, res, err := h.client.Route(ctx, req)
				if err != nil || res.Status != 0 || len(res.Endpoints) == 0 {
					t.Fatalf("route: %v %+v", err, res)
				}
				if got := h.router.lastInput(); got.Request == nil || got.Request.Model != "m" {
					t.Fatalf("router input %+v", got)
				}
				if !bytes.Equal(res.BodyEcho, req.Body) {
					t.Fatalf("echoed body differs (%d bytes, want %d)", len(res.BodyEcho), len(req.Body))
				}
				if res.Header != res.Endpoints[0] {
					t.Fatalf("destination header %q, endpoints %v", res.Header, res.Endpoints)
				}
				if err := st.Respond(ctx, 200, "text/event-stream", res.Endpoints[0], sseChunks); err != nil {
					t.Fatal(err)
				}
				if err := st.Close(); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}

// BenchmarkStreamBufferPool is one request whose ~40 KB body arrives and is
// echoed in one message (over gRPC's 32 KB tier) with grpcbuf installed (as
// kvpick runs) and with gRPC's own default pool: the stream-level gain of
// grpcbuf.Install. It swaps the process's default pool between runs, with no
// stream open.
func BenchmarkStreamBufferPool(b *testing.B) {
	testutil.DefaultGC(b)
	defer grpcbuf.Install()
	for _, tc := range []struct {
		name string
		pool mem.BufferPool
	}{{"pool=grpcbuf", grpcbuf.Shared}, {"pool=grpc-default", grpcDefaultPool}} {
		b.Run(tc.name, func(b *testing.B) {
			experimental.SetDefaultBufferPool(tc.pool)
			h := startHarness(b, newFakeRouter("10.0.0.1:8000"), Options{Log: logr.Discard()}, nil, nil)
			h.router.noRecord = true
			req := streamedReq(completion("m", longPrompt(10000)))
			ctx := testCtx(b)
			b.SetBytes(int64(len(req.Body)))
			b.ReportAllocs()
			for b.Loop() {
				roundTrip(b, h, ctx, req)
			}
		})
	}
}

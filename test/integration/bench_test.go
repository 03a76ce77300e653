package integration

import (
	"context"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/kvpick/kvpick/internal/testutil"
	"github.com/kvpick/kvpick/pkg/extproc"
	"github.com/kvpick/kvpick/pkg/extproc/envoyclient"
	"github.com/kvpick/kvpick/pkg/request"
	"github.com/kvpick/kvpick/pkg/route"
)

// BenchmarkRealDecision measures requests through the real decision path
// (tokenize, hash, index lookup, kv scheduling, accounting) over a real gRPC
// ext_proc stream on loopback: headers, streamed body, decision, echoed body,
// then the response. p50/p99: time to route; decision-p50/p99: what the
// picker adds to the request's path, from its last body byte sent to the
// decision received. Prompts are about 8,000 approximate tokens, half shared
// by a group so the index holds matches.
func BenchmarkRealDecision(b *testing.B) {
	testutil.DefaultGC(b)
	for _, n := range []int{10, 100} {
		b.Run(fmt.Sprintf("endpoints=%d", n), func(b *testing.B) {
			testutil.StreamBench(b, startPicker(b, n, nil).client)
		})
	}
}

// BenchmarkNopRouterStream is the baseline for RealDecision in the same run:
// the same stream and bodies with a router that does nothing (the body is
// still parsed). RealDecision minus this is the cost of deciding.
func BenchmarkNopRouterStream(b *testing.B) {
	testutil.DefaultGC(b)
	srv := extproc.NewServer(nopRouter{}, extproc.Options{})
	srv.SetReady(true)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- extproc.ServeGRPC(ctx, lis, srv, nil, time.Second) }()
	defer func() { cancel(); <-done }()
	c, err := envoyclient.Dial(ctx, lis.Addr().String(), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	testutil.StreamBench(b, c)
}

// BenchmarkTransportFloor is the same stream with no body (GET /v1/models,
// routed at the headers phase): what gRPC on loopback costs before any
// parsing or scoring.
func BenchmarkTransportFloor(b *testing.B) {
	testutil.DefaultGC(b)
	p := startPicker(b, 100, nil)
	ctx := context.Background()
	lat := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		st, res, err := p.client.Route(ctx, envoyclient.Request{Method: "GET", Path: "/v1/models"})
		if err != nil || res.Status != 0 {
			b.Fatalf("route: %v %+v", err, res)
		}
		lat = append(lat, time.Since(start))
		if err := st.Respond(ctx, 200, "application/json", res.Endpoints[0], [][]byte{[]byte(`{"data":[]}`)}); err != nil {
			b.Fatal(err)
		}
		st.Close()
	}
	b.StopTimer()
	testutil.ReportPercentiles(b, "", lat)
}

// nopRouter routes everything to one endpoint and keeps no state.
type nopRouter struct{}

type nopDecision struct{}

func (nopRouter) Route(context.Context, *route.Input) (route.Decision, error) {
	return nopDecision{}, nil
}
func (nopDecision) Endpoints() []string          { return []string{"10.0.0.1:8000"} }
func (nopDecision) Headers() []route.HeaderValue { return nil }
func (nopDecision) Commit()                      {}
func (nopDecision) Served(string)                {}
func (nopDecision) FirstToken()                  {}
func (nopDecision) Progress(int)                 {}
func (nopDecision) Usage(request.Usage)          {}
func (nopDecision) Done(error)                   {}

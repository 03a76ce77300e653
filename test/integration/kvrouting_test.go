// Package integration drives the real decision path (router, scheduler,
// index, admission) through a real ext_proc gRPC stream on loopback, the way
// Envoy does.
package integration

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"

	v1 "github.com/kvpick/kvpick/api/v1alpha1"
	"github.com/kvpick/kvpick/internal/testutil"
	"github.com/kvpick/kvpick/pkg/activework"
	"github.com/kvpick/kvpick/pkg/endpoints"
	"github.com/kvpick/kvpick/pkg/extproc"
	"github.com/kvpick/kvpick/pkg/extproc/envoyclient"
	"github.com/kvpick/kvpick/pkg/kvindex"
	"github.com/kvpick/kvpick/pkg/router"
)

type picker struct {
	client *envoyclient.Client
	router *router.Router
	active *activework.Tracker
	set    *endpoints.Set
}

func startPicker(t testing.TB, n int, mut func(*v1.Config)) *picker {
	t.Helper()
	cfg := &v1.Config{} // defaults after the caller's settings, as a config file gets them
	cfg.Router.Seed = 3
	if mut != nil {
		mut(cfg)
	}
	cfg.SetDefaults()
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	set := endpoints.NewSet()
	var eps []endpoints.Endpoint
	for i := 0; i < n; i++ {
		eps = append(eps, endpoints.Endpoint{Address: fmt.Sprintf("10.1.0.%d", i+1), Port: 8000, Models: []string{"m"},
			Capacity: endpoints.Capacity{TotalBlocks: 50000, MaxBatchedTokens: 8192}})
	}
	if err := set.Replace(eps); err != nil {
		t.Fatal(err)
	}
	var rt *router.Router
	active := activework.New(time.Minute, func() {
		if rt != nil {
			rt.Notify()
		}
	})
	rt, err := router.New(cfg, router.Deps{Set: set, Index: kvindex.New(kvindex.Options{}), Active: active, Log: logr.Discard()})
	if err != nil {
		t.Fatal(err)
	}
	srv := extproc.NewServer(rt, extproc.Options{Mode: cfg.Router.Mode})
	srv.SetReady(true)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- extproc.ServeGRPC(ctx, lis, srv, nil, time.Second) }()
	c, err := envoyclient.Dial(ctx, lis.Addr().String(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c.Close()
		rt.Close()
		cancel()
		<-done
	})
	return &picker{client: c, router: rt, active: active, set: set}
}

func body(prompt string) []byte { return testutil.CompletionBody(prompt) }

func prompt(group string, words, tail int) string { return testutil.Prompt(group, words, tail) }

// Requests that share a prefix land on the endpoint that holds it, while the
// distinct prefixes (and so the load) spread over the fleet.
func TestSharedPrefixesLandTogetherThroughTheStream(t *testing.T) {
	p := startPicker(t, 4, nil)
	ctx := context.Background()
	groups := []string{"a", "b", "c", "d"}
	where := map[string]map[string]int{}
	var open []*envoyclient.Stream
	for i := 0; i < 32; i++ {
		g := groups[i%len(groups)]
		st, res, err := p.client.Route(ctx, envoyclient.Request{Method: "POST", Path: "/v1/completions",
			Body: body(prompt(g, 2000, i)), ChunkSizes: []int{7000, 3, 911}})
		if err != nil || res.Status != 0 {
			t.Fatalf("route: %v %+v", err, res)
		}
		if res.DecisionLatency <= 0 {
			t.Fatalf("decision latency not measured: %v", res.DecisionLatency)
		}
		if res.Header != res.Metadata || len(res.Endpoints) != 3 {
			t.Fatalf("decision header %q metadata %q endpoints %v", res.Header, res.Metadata, res.Endpoints)
		}
		if where[g] == nil {
			where[g] = map[string]int{}
		}
		where[g][res.Endpoints[0]]++
		// The response streams a first token (prefill done) but the request stays open.
		if err := st.SendResponseHeaders(200, "text/event-stream", res.Endpoints[0], false); err != nil {
			t.Fatal(err)
		}
		if _, err := st.SendResponseBody([]byte("data: {\"choices\":[{\"text\":\"hi\"}]}\n\n"), false); err != nil {
			t.Fatal(err)
		}
		open = append(open, st)
	}
	used := map[string]bool{}
	for g, eps := range where {
		if len(eps) != 1 {
			t.Errorf("prefix group %s split over %v", g, eps)
		}
		for ep := range eps {
			used[ep] = true
		}
	}
	if len(used) != 4 {
		t.Errorf("4 prefix groups on %d endpoints: %v", len(used), where)
	}
	for _, e := range p.set.Snapshot().List {
		if got := p.active.Counts(e.Key()).Requests; got != 8 {
			t.Errorf("endpoint %s has %d requests in flight, want 8 (balanced)", e.Key(), got)
		}
	}
	for _, st := range open {
		if _, err := st.SendResponseBody([]byte("data: [DONE]\n\n"), true); err != nil {
			t.Fatal(err)
		}
		st.Close()
	}
	waitIdle(t, p)
}

// When every endpoint is past the busy threshold the caller gets 503 with a
// body that says so (with the admission queue off: kv mode's default queue
// would hold the request instead, up to admission.maxQueueWait).
func TestAllOverloadedThroughTheStream(t *testing.T) {
	p := startPicker(t, 2, func(c *v1.Config) {
		n, off := 1000, false
		c.Router.Busy.ActivePrefillTokens = &n
		c.Admission.Queue = &off
	})
	ctx := context.Background()
	var open []*envoyclient.Stream
	for i := 0; i < 2; i++ {
		st, res, err := p.client.Route(ctx, envoyclient.Request{Method: "POST", Path: "/v1/completions", Body: body(prompt("x", 1500, i))})
		if err != nil || res.Status != 0 {
			t.Fatalf("route %d: %v %+v", i, err, res)
		}
		open = append(open, st)
	}
	st, res, err := p.client.Route(ctx, envoyclient.Request{Method: "POST", Path: "/v1/completions", Body: body("small")})
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	if res.Status != 503 || !strings.Contains(string(res.ImmediateBody), "all eligible endpoints are overloaded") ||
		!strings.Contains(string(res.ImmediateBody), "AllEligibleWorkersOverloaded") {
		t.Fatalf("status %d body %s", res.Status, res.ImmediateBody)
	}
	for _, s := range open {
		s.Abort()
	}
	waitIdle(t, p)
}

func waitIdle(t *testing.T, p *picker) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for p.active.InFlight() != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d requests still accounted after their streams ended", p.active.InFlight())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

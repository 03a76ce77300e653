package router

import (
	"context"
	"fmt"
	"testing"
	"time"

	v1 "github.com/kvpick/kvpick/api/v1alpha1"
	"github.com/kvpick/kvpick/pkg/activework"
)

// BenchmarkRoute is the in-process decision path for an 8,000-token prompt:
// tokenize, hash 500 blocks, match the index, score every endpoint, record
// the decision, and free it. No transport. route-ns/op is Route alone (the
// request's wait); the rest is the commit and the lifecycle.
func BenchmarkRoute(b *testing.B) {
	for _, n := range []int{10, 100} {
		b.Run(fmt.Sprintf("endpoints=%d", n), func(b *testing.B) { benchRoute(b, newFixture(b, n, nil)) })
	}
}

// benchRoute drives f's router through b.N decisions and their lifecycles.
func benchRoute(b *testing.B, f *fixture) {
	inputs := make([]string, 64)
	for i := range inputs {
		// 8 groups sharing a 4,000-token prefix, 4,000 tokens of their own.
		inputs[i] = words(fmt.Sprintf("g%d", i%8), 2000) + words(fmt.Sprintf("u%d", i), 2000)
	}
	b.ReportAllocs()
	b.ResetTimer()
	var chose time.Duration // Route alone: what the request waits for
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		d, err := f.r.Route(context.Background(), input(inputs[i%len(inputs)], nil))
		chose += time.Since(t0)
		if err != nil {
			b.Fatal(err)
		}
		d.Commit()
		d.FirstToken()
		d.Done(nil)
	}
	b.ReportMetric(float64(chose.Nanoseconds())/float64(b.N), "route-ns/op")
}

// BenchmarkNotifyFullQueue is the release pass one notification (a prefill
// done, a request freed, a peer's event) brings while 1,000 cold requests
// wait: what overload costs the picker per event. "full": every endpoint is past the loosest
// threshold, so the queue asks the gate once for the whole group; "room":
// the endpoints have room for cached requests but not for cold ones, so
// every request is asked (an index lookup each, no scoring).
func BenchmarkNotifyFullQueue(b *testing.B) {
	for _, c := range []struct {
		name   string
		tokens int // active prefill per endpoint (max batched 8,192)
	}{{"full", 9000}, {"room", 4000}} {
		b.Run(c.name, func(b *testing.B) { benchNotify(b, c.tokens) })
	}
}

func benchNotify(b *testing.B, tokens int) {
	f := newFixture(b, 4, func(c *v1.Config) {
		th := 0.25
		c.Admission.QueueThreshold, c.Admission.MaxQueueLength = &th, 2000
	})
	for _, e := range f.set.Snapshot().List {
		f.active.Add(e.Key(), activework.Work{PromptTokens: tokens, UncachedTokens: tokens, BlockSize: 16}, f.clock())
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const waiting = 1000
	for i := range waiting {
		go func() { _, _ = f.r.Route(ctx, input(words(fmt.Sprint("w", i, "-"), 50), nil)) }()
	}
	for f.r.queue.Len() < waiting {
		time.Sleep(time.Millisecond)
	}
	b.ResetTimer()
	for range b.N {
		f.r.queue.ReleaseNow() // Notify's pass, timed on this goroutine
	}
	b.StopTimer()
	if f.r.queue.Len() != waiting {
		b.Fatalf("%d of %d still queued: the fleet was meant to stay full", f.r.queue.Len(), waiting)
	}
}

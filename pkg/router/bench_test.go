package router

import (
	"context"
	"fmt"
	"testing"
	"time"
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

package router

import (
	"context"
	"fmt"
	"testing"

	v1 "github.com/kvpick/kvpick/api/v1alpha1"
	"github.com/kvpick/kvpick/pkg/endpoints"
)

// BenchmarkRouteBlockSizes is Route over 100 endpoints on each observation
// path, and on the events path with half the endpoints at block size 32
// (kv.blockSize 16): the request is then hashed and looked up once more.
func BenchmarkRouteBlockSizes(b *testing.B) {
	cases := []struct {
		name, obs string
		mixed     bool
	}{{"predicted", v1.ObservePredicted, false}, {"events", v1.ObserveEvents, false}, {"events-sizes-16-32", v1.ObserveEvents, true}}
	inputs := make([]string, 64)
	for i := range inputs {
		inputs[i] = words(fmt.Sprintf("g%d", i%8), 2000) + words(fmt.Sprintf("u%d", i), 2000)
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			f := newFixture(b, 100, func(c *v1.Config) { c.KV.Observation = tc.obs }, func(i int, e *endpoints.Endpoint) {
				if tc.mixed && i%2 == 1 {
					e.Capacity.BlockSize = 32
				}
			})
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				d, err := f.r.Route(context.Background(), input(inputs[i%len(inputs)], nil))
				if err != nil {
					b.Fatal(err)
				}
				d.Commit()
				d.FirstToken()
				d.Done(nil)
			}
		})
	}
}

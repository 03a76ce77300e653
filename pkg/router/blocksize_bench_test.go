package router

import (
	"testing"

	v1 "github.com/kvpick/kvpick/api/v1alpha1"
	"github.com/kvpick/kvpick/pkg/endpoints"
)

// BenchmarkRouteBlockSizes is Route over 100 endpoints on each observation
// path, on the events path with its bridge claims (kv.eventsBridge on),
// and on the events path with half the endpoints at block size 32
// (kv.blockSize 16): the request is then hashed and looked up once more.
// route-ns/op is Route alone, ns/op the request's whole lifecycle.
func BenchmarkRouteBlockSizes(b *testing.B) {
	on := true
	cases := []struct {
		name, obs string
		mixed     bool
		bridge    *bool
	}{{"predicted", v1.ObservePredicted, false, nil}, {"events", v1.ObserveEvents, false, nil},
		{"events-bridge", v1.ObserveEvents, false, &on}, {"events-sizes-16-32", v1.ObserveEvents, true, nil}}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			f := newFixture(b, 100, func(c *v1.Config) { c.KV.Observation, c.KV.EventsBridge = tc.obs, tc.bridge }, func(i int, e *endpoints.Endpoint) {
				if tc.mixed && i%2 == 1 {
					e.Capacity.BlockSize = 32
				}
			})
			benchRoute(b, f)
		})
	}
}

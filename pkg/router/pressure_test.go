package router

import (
	"context"
	"fmt"
	"testing"
	"time"

	promtest "github.com/prometheus/client_golang/prometheus/testutil"

	v1 "github.com/kvpick/kvpick/api/v1alpha1"
	"github.com/kvpick/kvpick/pkg/telemetry"
)

// The prefill pressure through the router: a cold prompt's tokens count on
// its endpoint's prefill rate (router.kvCost.prefillPressureWindow), so
// the next cold prompt, alike but for its text, goes to the other idle
// endpoint. Off ("0s") and under the blocks model the rate is not kept.
func TestPrefillPressureThroughTheRouter(t *testing.T) {
	for _, tc := range []struct {
		name  string
		mut   func(*v1.Config)
		keeps bool
	}{
		{"default", nil, true},
		{"off", func(c *v1.Config) { c.Router.KVCost.PrefillPressureWindow = &v1.Duration{} }, false},
		{"blocks model", func(c *v1.Config) { c.Router.KVCost.Model = v1.CostModelBlocks }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, 2, func(cfg *v1.Config) {
				no := false
				cfg.Admission.Queue = &no
				if tc.mut != nil {
					tc.mut(cfg)
				}
			})
			ctx := context.Background()
			first := ""
			for i := range 2 {
				d, err := f.route(ctx, input(words(fmt.Sprint("doc", i), 3000), nil))
				if err != nil {
					t.Fatal(err)
				}
				ep := d.Endpoints()[0]
				d.FirstToken()
				d.Done(nil)
				if i == 0 {
					first = ep
					if rate := f.active.PrefillRate(ep, f.clock()); (rate > 0) != tc.keeps {
						t.Fatalf("prefill rate on %s %v after a cold prompt; want it kept: %v", ep, rate, tc.keeps)
					}
					if g := promtest.ToFloat64(telemetry.PrefillPressure.WithLabelValues(ep)); tc.keeps && g <= 0 {
						t.Fatalf("kvpick_endpoint_prefill_pressure_tokens_per_second{%s} = %v after a cold prompt", ep, g)
					}
				} else if tc.keeps && ep == first {
					t.Fatalf("the second cold prompt went to %s as the first did; want the other endpoint", ep)
				}
				f.advance(time.Second)
			}
		})
	}
}

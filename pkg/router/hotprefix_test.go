package router

import (
	"context"
	"fmt"
	"testing"
	"time"

	promtest "github.com/prometheus/client_golang/prometheus/testutil"

	v1 "github.com/kvpick/kvpick/api/v1alpha1"
	"github.com/kvpick/kvpick/pkg/activework"
	"github.com/kvpick/kvpick/pkg/telemetry"
)

// TestHotPrefixSpreadsThroughTheRouter: requests sharing a 4,800-token
// prefix go to its holder and decode there; then the holder starts a
// 6,000-token prefill of another prompt. With three of them in flight
// (router.kvCost.hotPrefixRequests' default) the next request goes to the
// other endpoint, which computes the prefix sooner than the holder would
// reach it; with two, or with the rule off, it waits on the holder rather
// than recompute a prefix one endpoint holds. The router fills the sharers
// from its own in-flight work.
func TestHotPrefixSpreadsThroughTheRouter(t *testing.T) {
	cases := []struct {
		name     string
		inFlight int
		off      bool
		second   bool
	}{
		{"three in flight", 3, false, true},
		{"two in flight", 2, false, false},
		{"rule off", 3, true, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, 2, func(cfg *v1.Config) {
				off := false
				cfg.Admission.Queue = &off // a queued request never makes a second copy
				if c.off {
					cfg.Router.KVCost.HotPrefixRequests = new(int)
				}
			})
			ctx := context.Background()
			prefix := words("doc", 2400)
			var holder string
			for i := range c.inFlight {
				d, err := f.route(ctx, input(prefix+words(fmt.Sprint("q", i), 40), nil))
				if err != nil {
					t.Fatal(err)
				}
				ep := d.Endpoints()[0]
				if i == 0 {
					holder = ep
				} else if ep != holder {
					t.Fatalf("request %d went to %s, want the holder %s", i, ep, holder)
				}
				d.FirstToken()
				t.Cleanup(func() { d.Done(nil) })
			}
			long := f.active.Start(holder, activework.Work{PromptTokens: 6000, UncachedTokens: 6000, BlockSize: 16}, f.clock())
			defer long.Free()
			ep, got := routeCounted(t, f, prefix)
			if second := ep != holder; second != c.second {
				t.Fatalf("went to %s (holder %s); want the other endpoint: %v", ep, holder, c.second)
			}
			// Counted as a copy only when the prefix was hot (the rule off makes no count: nothing reads sharers).
			if want := map[bool]float64{true: 1}[c.second]; got != want {
				t.Fatalf("kvpick_router_hot_prefix_copies_total rose by %v, want %v", got, want)
			}
		})
	}
}

// A popular prefix held by one endpoint gets its second copy through the
// router once it has drawn popularMinRequests: before that every request
// for it stays on the holder; then the next one, finding the holder busy,
// goes to the idle endpoint and counts as a copy. With the rule off it
// waits on the holder.
func TestPopularPrefixCopied(t *testing.T) {
	for _, off := range []bool{false, true} {
		t.Run(fmt.Sprintf("off=%v", off), func(t *testing.T) {
			f := newFixture(t, 2, func(cfg *v1.Config) {
				no := false
				cfg.Admission.Queue = &no
				cfg.Router.KVCost.HotPrefixRequests = new(int) // this test is about the popular rule alone
				if off {
					cfg.Router.KVCost.PopularShare = new(float64)
				}
			})
			ctx := context.Background()
			prefix := words("doc", 2400)
			var holder string
			// One request a second. The first is counted under no held prefix,
			// so the prefix's decayed count passes popularMinRequests at the
			// tenth.
			for i := range popularMinRequests + 1 {
				d, err := f.route(ctx, input(prefix+words(fmt.Sprint("q", i), 40), nil))
				if err != nil {
					t.Fatal(err)
				}
				if i == 0 {
					holder = d.Endpoints()[0]
				} else if ep := d.Endpoints()[0]; ep != holder {
					t.Fatalf("request %d went to %s, want the holder %s (under popularMinRequests)", i, ep, holder)
				}
				d.FirstToken()
				d.Done(nil)
				f.advance(time.Second)
			}
			// A short prefill on the holder: waiting it out is far cheaper than
			// computing the prefix elsewhere, unless the prefix is popular.
			short := f.active.Start(holder, activework.Work{PromptTokens: 1000, UncachedTokens: 1000, BlockSize: 16}, f.clock())
			defer short.Free()
			ep, got := routeCounted(t, f, prefix)
			if second := ep != holder; second == off {
				t.Fatalf("went to %s (holder %s); want the other endpoint: %v", ep, holder, !off)
			}
			if want := map[bool]float64{false: 1}[off]; got != want {
				t.Fatalf("kvpick_router_hot_prefix_copies_total rose by %v, want %v", got, want)
			}
		})
	}
}

// routeCounted routes one more request for prefix and returns the endpoint
// it went to and how much kvpick_router_hot_prefix_copies_total rose; the
// request is done when the test ends.
func routeCounted(t *testing.T, f *fixture, prefix string) (string, float64) {
	t.Helper()
	copies := telemetry.HotPrefixCopies.WithLabelValues("")
	before := promtest.ToFloat64(copies)
	d, err := f.route(context.Background(), input(prefix+words("next", 40), nil))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Done(nil) })
	return d.Endpoints()[0], promtest.ToFloat64(copies) - before
}

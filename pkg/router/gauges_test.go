package router

import (
	"testing"

	promtest "github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/kvpick/kvpick/pkg/activework"
	"github.com/kvpick/kvpick/pkg/telemetry"
)

// Work that no decision of this router publishes (a peer's, applied by
// replica sync, and its end) shows in the active-work gauges at the next
// Tick, so they go back to zero when the fleet is idle.
func TestTickPublishesActiveGauges(t *testing.T) {
	f := newFixture(t, 2, nil)
	ep := f.set.Snapshot().List[1].Key()
	h := f.active.Add(ep, activework.Work{PromptTokens: 64, UncachedTokens: 64, BlockSize: 16}, f.clock())
	steps := []struct {
		name                    string
		act                     func()
		requests, prefill, held float64
	}{
		{"a peer's request applied", func() {}, 1, 64, 4},
		{"and freed", h.Free, 0, 0, 0},
	}
	for _, st := range steps {
		st.act()
		f.r.Tick(f.clock())
		got := []float64{promtest.ToFloat64(telemetry.ActiveRequests.WithLabelValues(ep)),
			promtest.ToFloat64(telemetry.ActivePrefillTokens.WithLabelValues(ep)),
			promtest.ToFloat64(telemetry.ActiveDecodeBlocks.WithLabelValues(ep))}
		if got[0] != st.requests || got[1] != st.prefill || got[2] != st.held {
			t.Errorf("%s: gauges requests/prefill/decode blocks = %v, want %v/%v/%v", st.name, got, st.requests, st.prefill, st.held)
		}
	}
}

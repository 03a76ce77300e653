package telemetry

import (
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// startRuns numbers TestStartPoolCreatesStateGauges's runs.
var startRuns atomic.Int64

// countSeries counts the series a collector exposes.
func countSeries(c prometheus.Collector) int {
	ch := make(chan prometheus.Metric, 64)
	go func() { c.Collect(ch); close(ch) }()
	n := 0
	for range ch {
		n++
	}
	return n
}

// A pool's state gauges exist from start, at 0 unless they describe the configuration.
func TestStartPoolCreatesStateGauges(t *testing.T) {
	// Pools named afresh on each run: the gauges are global, and a second
	// run (-count 2) would otherwise find the first run's series.
	run := startRuns.Add(1)
	pools := []struct{ pool, observation string }{
		{fmt.Sprintf("start-a-%d", run), "predicted"}, {fmt.Sprintf("start-b-%d", run), "events"}}
	before := countSeries(EventsSilent)
	for _, tc := range pools {
		StartPool(tc.pool, tc.observation)
	}
	// counted before any read below, which would create a series itself
	if n := countSeries(EventsSilent); n != before+2 {
		t.Fatalf("kv_events_silent series = %d, want %d (one per started pool)", n, before+2)
	}
	for _, tc := range pools {
		for _, p := range observationPaths {
			want := 0.0
			if p == tc.observation {
				want = 1
			}
			if got := gaugeValue(t, ObservationPath.WithLabelValues(tc.pool, "", p)); got != want {
				t.Errorf("%s: kv_observation_path{path=%s} = %v, want %v", tc.pool, p, got, want)
			}
		}
		if got := gaugeValue(t, EventsSilent.WithLabelValues(tc.pool)); got != 0 {
			t.Errorf("%s: kv_events_silent = %v, want 0", tc.pool, got)
		}
	}
}

package kvindex

import (
	"github.com/kvpick/kvpick/internal/testutil"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/kvpick/kvpick/pkg/telemetry"
)

func TestKVIndexCollector(t *testing.T) {
	ix := New(Options{})
	now := time.Unix(1000, 0)
	ix.RecordPredicted("10.0.0.1:8000", []uint64{1, 2, 3}, now)
	ix.RecordPredicted("10.0.0.2:8000", []uint64{1}, now)
	RegisterMetrics("test-predicted", ix.Stats)
	defer UnregisterMetrics("test-predicted")

	got := gatherKVIndex(t, "test-predicted")
	want := map[string]float64{
		"kvpick_kvindex_entries/predicted":                      4,
		"kvpick_kvindex_entries/observed":                       0,
		"kvpick_kvindex_blocks/":                                3,
		"kvpick_kvindex_endpoint_blocks/10.0.0.1:8000":          3,
		"kvpick_kvindex_endpoint_capacity_blocks/10.0.0.2:8000": 1 << 20,
		"kvpick_kvindex_unknown_parent_total/":                  0,
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v (all: %v)", k, got[k], v, got)
		}
	}
	UnregisterMetrics("test-predicted")
	if n := len(gatherKVIndex(t, "test-predicted")); n != 0 {
		t.Fatalf("%d series left after unregister", n)
	}
}

// gatherKVIndex returns "family/path-or-endpoint" -> value for one instance.
func gatherKVIndex(t *testing.T, index string) map[string]float64 {
	return gatherWhere(t, func(m *dto.Metric) (string, bool) {
		return label(m, "path") + label(m, "endpoint"), label(m, "index") == index
	})
}

// gatherWhere is testutil.GatherWhere on the process's registry.
func gatherWhere(t *testing.T, keep func(*dto.Metric) (sub string, ok bool)) map[string]float64 {
	return testutil.GatherWhere(t, telemetry.Registry, keep)
}

func label(m *dto.Metric, name string) string { return testutil.Label(m, name) }

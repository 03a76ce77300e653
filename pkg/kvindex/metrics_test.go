package kvindex

import (
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

// gatherWhere returns "family/sub" -> value (counter or gauge) of every series keep accepts, sub being what keep
// returns for it.
func gatherWhere(t *testing.T, keep func(*dto.Metric) (sub string, ok bool)) map[string]float64 {
	t.Helper()
	fams, err := telemetry.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, f := range fams {
		for _, m := range f.GetMetric() {
			if sub, ok := keep(m); ok {
				out[f.GetName()+"/"+sub] = seriesValue(m)
			}
		}
	}
	return out
}

func seriesValue(m *dto.Metric) float64 {
	if m.GetCounter() != nil {
		return m.GetCounter().GetValue()
	}
	return m.GetGauge().GetValue()
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

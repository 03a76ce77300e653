package telemetry

import (
	"testing"

	dto "github.com/prometheus/client_model/go"
)

// gatherWhere returns "family/sub" -> value (counter or gauge) of every series keep accepts, sub being what keep
// returns for it.
func gatherWhere(t *testing.T, keep func(*dto.Metric) (sub string, ok bool)) map[string]float64 {
	t.Helper()
	fams, err := Registry.Gather()
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

package testutil

import (
	"net"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// GatherWhere returns "family/sub" -> value (counter or gauge) of every series
// in reg that keep accepts, sub being what keep returns for it.
func GatherWhere(t testing.TB, reg prometheus.Gatherer, keep func(*dto.Metric) (sub string, ok bool)) map[string]float64 {
	t.Helper()
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, f := range fams {
		for _, m := range f.GetMetric() {
			if sub, ok := keep(m); ok {
				out[f.GetName()+"/"+sub] = SeriesValue(m)
			}
		}
	}
	return out
}

// SeriesValue is a counter's or a gauge's value.
func SeriesValue(m *dto.Metric) float64 {
	if m.GetCounter() != nil {
		return m.GetCounter().GetValue()
	}
	return m.GetGauge().GetValue()
}

// Label is the value of m's label name ("" when absent).
func Label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// FreePort is a TCP port on 127.0.0.1 that was free a moment ago.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

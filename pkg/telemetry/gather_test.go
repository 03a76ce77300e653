package telemetry

import (
	"testing"

	dto "github.com/prometheus/client_model/go"

	"github.com/kvpick/kvpick/internal/testutil"
)

// gatherWhere is testutil.GatherWhere on this package's Registry.
func gatherWhere(t *testing.T, keep func(*dto.Metric) (sub string, ok bool)) map[string]float64 {
	return testutil.GatherWhere(t, Registry, keep)
}

func label(m *dto.Metric, name string) string { return testutil.Label(m, name) }

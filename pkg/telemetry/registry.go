// Package telemetry owns the Prometheus metrics kvpick exports and the logging
// setup. Metrics are grouped per subsystem in files of their own; all register
// into Registry, which cmd/kvpick serves on /metrics.
package telemetry

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// Namespace prefixes every kvpick metric.
const Namespace = "kvpick"

// Registry holds every kvpick metric plus the Go and process collectors.
var Registry = prometheus.NewRegistry()

func init() {
	Registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
}

// must registers collectors and returns the first, for one-line definitions.
func must[T prometheus.Collector](c T) T {
	Registry.MustRegister(c)
	return c
}

// Package telemetry owns the Prometheus metrics kvpick exports and the logging
// setup. Metrics are grouped per subsystem in files of their own; all register
// into Registry, which cmd/kvpick serves on /metrics.
package telemetry

import (
	"regexp"
	"sort"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// Namespace prefixes every kvpick metric.
const Namespace = "kvpick"

// Registry holds every kvpick metric plus the Go and process collectors.
var Registry = prometheus.NewRegistry()

// registered lists every collector in Registry, for MetricNames: a vector
// with no series yet is absent from Registry.Gather but still exported later.
var registered []registration

type registration struct {
	c    prometheus.Collector
	hist bool // its families are histograms
}

func init() {
	// The Go runtime collector's families count as histograms: some are.
	g := collectors.NewGoCollector()
	Registry.MustRegister(g)
	registered = append(registered, registration{g, true})
	must(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
}

// must registers collectors and returns the first, for one-line definitions.
func must[T prometheus.Collector](c T) T {
	Registry.MustRegister(c)
	registered = append(registered, registration{c, isHistogram(c)})
	return c
}

// Register adds a collector another package owns (e.g. the KV index's
// scrape-time collector) to Registry, so MetricNames lists its families too.
func Register(c prometheus.Collector) { must(c) }

// fqName is the only way to read a Desc's name: its String form.
var fqName = regexp.MustCompile(`fqName: "([^"]+)"`)

// MetricNames returns every metric family Registry may export, mapped to
// whether it is a histogram (exported as _bucket, _sum and _count series).
func MetricNames() map[string]bool {
	out := map[string]bool{}
	for _, r := range registered {
		ch := make(chan *prometheus.Desc, 512)
		go func() { r.c.Describe(ch); close(ch) }()
		for d := range ch {
			if m := fqName.FindStringSubmatch(d.String()); m != nil {
				out[m[1]] = r.hist
			}
		}
	}
	return out
}

// isHistogram: vectors and plain metrics by type; the custom collectors of
// this package export gauges and counters only.
func isHistogram(c prometheus.Collector) bool {
	switch c.(type) {
	case *prometheus.HistogramVec, prometheus.Histogram:
		return true
	}
	return false
}

// SortedNames is MetricNames' keys in order, for messages.
func SortedNames() []string {
	names := MetricNames()
	out := make([]string, 0, len(names))
	for n := range names {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

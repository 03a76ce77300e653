// Package gctune applies the process's garbage-collector settings from the
// config. The decision path allocates per request (gRPC messages, body
// buffers), and with Go's default GOGC=100 on a small live heap the collector
// runs every few milliseconds; its stop-the-world phases and assists land in
// the tail of decision latency. A higher growth target, bounded by a memory
// limit, trades heap for a quieter tail. Gain: BenchmarkGCSettings in
// test/integration (decision latency under the default GOGC and under these).
package gctune

import (
	"os"
	"runtime/debug"
)

// Settings are the collector settings in effect after Apply.
type Settings struct {
	GCPercent        int
	MemoryLimitBytes int64  // math.MaxInt64 means no limit
	GCFromEnv        bool   // GOGC was set in the environment and left alone
	LimitSource      string // "config", "container" (90% of the cgroup limit), "env" (GOMEMLIMIT) or "none"
}

// containerShare of the cgroup limit becomes the soft limit: the rest is
// headroom for memory the Go collector does not manage (stacks, OS buffers).
const containerShare = 0.9

// Apply sets the GC percent (unless the GOGC environment variable is set:
// operators who set it mean it; percent nil leaves the runtime's value) and
// the soft memory limit: limit when > 0, else 90% of the container's memory
// limit read under cgroupRoot, unless GOMEMLIMIT is set. The limit is what
// makes a high GC percent safe: the heap cannot outgrow the container. It
// returns the settings in effect.
func Apply(percent *int, limit int64, cgroupRoot string) Settings {
	var s Settings
	_, limitEnv := os.LookupEnv("GOMEMLIMIT")
	switch {
	case limit > 0:
		debug.SetMemoryLimit(limit)
		s.LimitSource = "config"
	case limitEnv:
		s.LimitSource = "env"
	default:
		s.LimitSource = "none"
		if c, ok := ContainerLimit(cgroupRoot); ok {
			debug.SetMemoryLimit(int64(float64(c) * containerShare))
			s.LimitSource = "container"
		}
	}
	s.MemoryLimitBytes = debug.SetMemoryLimit(-1) // -1 reads without changing
	_, s.GCFromEnv = os.LookupEnv("GOGC")
	if percent != nil && !s.GCFromEnv {
		debug.SetGCPercent(*percent)
	}
	s.GCPercent = debug.SetGCPercent(-1)
	debug.SetGCPercent(s.GCPercent) // reading it needs a write; put it back
	return s
}

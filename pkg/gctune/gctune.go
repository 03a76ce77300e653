// Package gctune applies the process's garbage-collector settings from the
// config. The decision path allocates per request (gRPC messages, body
// buffers), and with Go's default GOGC=100 on a small live heap the collector
// runs every few milliseconds; its stop-the-world phases and assists land in
// the tail of decision latency. A higher growth target, bounded by a memory
// limit, trades heap for a quieter tail.
package gctune

import (
	"os"
	"runtime/debug"
)

// Settings are the collector settings in effect after Apply.
type Settings struct {
	GCPercent        int
	MemoryLimitBytes int64 // math.MaxInt64 means no limit
	FromEnv          bool  // GOGC was set in the environment and left alone
}

// Apply sets the GC percent (unless the GOGC environment variable is set:
// operators who set it mean it) and, when limit > 0, the soft memory limit.
// percent nil leaves the runtime's value. It returns the settings in effect.
func Apply(percent *int, limit int64) Settings {
	var s Settings
	if limit > 0 {
		debug.SetMemoryLimit(limit)
	}
	s.MemoryLimitBytes = debug.SetMemoryLimit(-1) // -1 reads without changing
	_, s.FromEnv = os.LookupEnv("GOGC")
	if percent != nil && !s.FromEnv {
		debug.SetGCPercent(*percent)
	}
	s.GCPercent = debug.SetGCPercent(-1)
	debug.SetGCPercent(s.GCPercent) // reading it needs a write; put it back
	return s
}

package testutil

import (
	"runtime/debug"
	"testing"

	v1 "github.com/kvpick/kvpick/api/v1alpha1"
	"github.com/kvpick/kvpick/pkg/gctune"
)

// DefaultGC runs a benchmark under the collector settings kvpick applies at
// start with the default config (server.gcPercent, the container's memory
// limit), restoring the previous ones afterwards. In-process benchmarks get
// the picker's settings; a benchmark whose process only plays Envoy gets
// them too, since Envoy has no collector to pause it.
func DefaultGC(b *testing.B) {
	old, oldLimit := debug.SetGCPercent(100), debug.SetMemoryLimit(-1)
	debug.SetGCPercent(old)
	gctune.Apply(v1.Default().Server.GCPercent, 0, gctune.CgroupRoot)
	b.Cleanup(func() { debug.SetGCPercent(old); debug.SetMemoryLimit(oldLimit) })
}

package integration

import (
	"runtime/debug"
	"testing"

	"github.com/kvpick/kvpick/internal/testutil"
)

// BenchmarkGCSettings is pkg/gctune's rent: RealDecision at 10 endpoints under
// Go's default collector (GOGC=100, no limit) and under the settings kvpick
// applies (server.gcPercent with the container's memory limit). Compare
// decision-p99-µs between the two.
func BenchmarkGCSettings(b *testing.B) {
	b.Run("gc=go-default", func(b *testing.B) {
		old, oldLimit := debug.SetGCPercent(100), debug.SetMemoryLimit(-1)
		defer func() { debug.SetGCPercent(old); debug.SetMemoryLimit(oldLimit) }()
		debug.SetMemoryLimit(1<<63 - 1)
		testutil.StreamBench(b, startPicker(b, 10, nil).client)
	})
	b.Run("gc=kvpick", func(b *testing.B) {
		testutil.DefaultGC(b)
		testutil.StreamBench(b, startPicker(b, 10, nil).client)
	})
}

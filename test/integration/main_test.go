package integration

import (
	"os"
	"testing"

	"github.com/kvpick/kvpick/pkg/grpcbuf"
)

// TestMain runs with gRPC's buffer pool as kvpick installs it, so the
// decision-path benchmarks measure what the binary runs.
func TestMain(m *testing.M) {
	grpcbuf.Install()
	os.Exit(m.Run())
}

package extproc

import (
	"os"
	"testing"

	"google.golang.org/grpc/mem"

	"github.com/kvpick/kvpick/pkg/grpcbuf"
)

// grpcDefaultPool is gRPC's own default buffer pool, kept for comparison.
var grpcDefaultPool mem.BufferPool

// TestMain runs the package's tests with gRPC's buffer pool as kvpick runs
// it (installed at initialization, as gRPC requires).
func TestMain(m *testing.M) {
	grpcDefaultPool = mem.DefaultBufferPool()
	grpcbuf.Install()
	os.Exit(m.Run())
}

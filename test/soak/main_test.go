package soak

import (
	"os"
	"testing"

	"github.com/kvpick/kvpick/internal/testutil"
)

// TestMain removes the binaries the tests built once they have run.
func TestMain(m *testing.M) { os.Exit(testutil.RunRemovingBinaries(m)) }

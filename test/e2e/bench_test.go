package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kvpick/kvpick/internal/testutil"
	"github.com/kvpick/kvpick/pkg/extproc/envoyclient"
)

// BenchmarkExternalPicker measures the kvpick binary as a separate process
// (100 endpoints, kv mode, scraping off), pinned to CPU 0 when taskset
// exists, so that only the network separates it from this client. Pin the
// client to the other core to keep them apart:
//
//	taskset -c 1 go test -run '^$' -bench ExternalPicker ./test/e2e
//
// KVPICK_BENCH_PIN=0 leaves both processes to the scheduler on every core.
func BenchmarkExternalPicker(b *testing.B) {
	testutil.DefaultGC(b) // this process plays Envoy: keep its collector out of the measurement
	dir := b.TempDir()
	var eps strings.Builder
	eps.WriteString("endpoints:\n")
	for i := 0; i < 100; i++ {
		fmt.Fprintf(&eps, "- {address: 10.3.%d.%d, port: 8000, models: [m]}\n", i/250, i%250+1)
	}
	epsFile, cfgFile := filepath.Join(dir, "eps.yaml"), filepath.Join(dir, "cfg.yaml")
	if err := os.WriteFile(epsFile, []byte(eps.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(cfgFile, []byte("scrape:\n  disabled: true\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	bin, args := testutil.Binary(b, "kvpick"), []string{"--config", cfgFile, "--endpoints-file", epsFile,
		"--grpc-addr", "127.0.0.1:0", "--metrics-addr", "off", "--plaintext", "--ready-file", filepath.Join(dir, "ready.json")}
	if ts, err := exec.LookPath("taskset"); err == nil && os.Getenv("KVPICK_BENCH_PIN") != "0" {
		bin, args = ts, append([]string{"-c", "0", bin}, args...)
	}
	p := testutil.Start(b, bin, args...)
	addr := readReady(b, p, filepath.Join(dir, "ready.json"), 20*time.Second)["grpc"]
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := envoyclient.Dial(ctx, addr, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	testutil.StreamBench(b, c)
}

// Package e2e runs the real binaries as separate processes on loopback: two
// modelsim servers publishing KV events, kvpick subscribed to them, and a
// gateway built on envoyclient sending real HTTP traffic.
package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kvpick/kvpick/internal/testutil"
	"github.com/kvpick/kvpick/pkg/extproc/envoyclient"
)

var (
	listenRe = regexp.MustCompile(`modelsim listening on (127\.0\.0\.1:\d+)`)
)

func freePort(t *testing.T) int { return testutil.FreePort(t) }

type fleet struct {
	eps      string // endpoints file
	ports    []int
	lines    []string
	grpc     string
	metrics  string
	kvpick   *testutil.Proc
	modelsim []*testutil.Proc
}

func startFleet(t *testing.T, n int, kvpickArgs ...string) *fleet {
	t.Helper()
	f := &fleet{eps: filepath.Join(t.TempDir(), "endpoints.yaml")}
	sim := testutil.Binary(t, "modelsim")
	for i := 0; i < n; i++ {
		ev := fmt.Sprintf("tcp://127.0.0.1:%d", freePort(t))
		p := testutil.Start(t, sim, "--port", "0", "--model", "m", "--step-overhead", "1ms", "--prefill-rate", "200000",
			"--kv-events-endpoint", ev, "--seed", strconv.Itoa(i))
		addr := p.WaitFor(t, listenRe, 20*time.Second)
		port, _ := strconv.Atoi(addr[strings.LastIndex(addr, ":")+1:])
		f.ports = append(f.ports, port)
		f.lines = append(f.lines, fmt.Sprintf("- {name: sim-%d, address: 127.0.0.1, port: %d, models: [m], kvEvents: %q}", i, port, ev))
		f.modelsim = append(f.modelsim, p)
	}
	f.writeEndpoints(t, f.lines)
	ready := filepath.Join(t.TempDir(), "ready.json")
	args := append([]string{"--endpoints-file", f.eps, "--grpc-addr", "127.0.0.1:0", "--metrics-addr", "127.0.0.1:0", "--plaintext",
		"--ready-file", ready}, kvpickArgs...)
	f.kvpick = testutil.Start(t, testutil.Binary(t, "kvpick"), args...)
	addrs := readReady(t, f.kvpick, ready, 20*time.Second)
	f.grpc, f.metrics = addrs["grpc"], addrs["metrics"]
	if f.grpc == "" || f.metrics == "" {
		t.Fatalf("ready file %v lacks an address", addrs)
	}
	return f
}

func (f *fleet) writeEndpoints(t *testing.T, lines []string) {
	t.Helper()
	data := "endpoints:\n" + strings.Join(lines, "\n") + "\n"
	if err := os.WriteFile(f.eps, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func (f *fleet) metric(t *testing.T, name string) float64 {
	t.Helper()
	text, err := testutil.MetricsText(f.metrics)
	if err != nil {
		t.Fatal(err)
	}
	if i := strings.IndexByte(name, '{'); i >= 0 { // a whole series: its label set must match
		return testutil.SumSeries(text, name[:i], name[i:])
	}
	return testutil.SumSeries(text, name)
}

func words(tag string, n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, " %s%03x", tag, i%4096)
	}
	return b.String()
}

func send(t *testing.T, c *envoyclient.Client, prompt string) *envoyclient.GatewayResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	body := fmt.Sprintf(`{"model":"m","prompt":%q,"max_tokens":4,"stream":true,"stream_options":{"include_usage":true}}`, prompt)
	res, err := c.Do(ctx, &http.Client{Timeout: 30 * time.Second}, envoyclient.Request{Method: "POST", Path: "/v1/completions", Body: []byte(body)})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// With engine KV events, requests sharing a prefix follow the cache the
// engines report, the engines confirm the hits, and the picker's own hit
// accounting is on the observed path.
func TestObservedCacheRoutingAcrossProcesses(t *testing.T) {
	f := startFleet(t, 2, "--no-router-kv-events=false")
	c := testutil.DialPicker(t, f.grpc)
	shared := words("s", 1500)
	first := send(t, c, shared+words("q", 20))
	if first.Status != 200 {
		t.Fatalf("status %d: %s", first.Status, first.Body)
	}
	deadline := time.Now().Add(10 * time.Second)
	for f.metric(t, "kvpick_kvevents_batches_total") == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no KV event batch reached kvpick")
		}
		time.Sleep(20 * time.Millisecond)
	}
	for i := 0; i < 6; i++ {
		res := send(t, c, shared+words(fmt.Sprintf("r%d", i), 20))
		if res.Status != 200 || res.Endpoint != first.Endpoint {
			t.Fatalf("request %d: status %d on %s, want the cache holder %s", i, res.Status, res.Endpoint, first.Endpoint)
		}
		if !strings.Contains(string(res.Body), `"cached_tokens":`) || strings.Contains(string(res.Body), `"cached_tokens":0`) {
			t.Fatalf("engine reported no cache hit: %s", res.Body)
		}
	}
	if hits := f.metric(t, `kvpick_kv_hit_ratio_sum{observation="events",pool="default"}`); hits < 5 {
		t.Fatalf("observed-path hit ratio sum %v, want > 5 over 6 hits", hits)
	}
}

// The endpoints file is reloaded: an endpoint removed from it gets no more
// traffic; SIGTERM shuts the picker down cleanly.
func TestEndpointsReloadAndGracefulStop(t *testing.T) {
	f := startFleet(t, 2, "--router-mode", "round-robin")
	c := testutil.DialPicker(t, f.grpc)
	seen := map[string]bool{}
	for i := 0; i < 4; i++ {
		seen[send(t, c, words("a", 50)).Endpoint] = true
	}
	if len(seen) != 2 {
		t.Fatalf("round-robin used %v", seen)
	}
	f.writeEndpoints(t, f.lines[:1])
	f.kvpick.WaitFor(t, regexp.MustCompile(`(endpoints reloaded)`), 10*time.Second)
	for i := 0; i < 4; i++ {
		if res := send(t, c, words("b", 50)); res.Endpoint != fmt.Sprintf("127.0.0.1:%d", f.ports[0]) {
			t.Fatalf("request went to removed endpoint %s", res.Endpoint)
		}
	}
	if err := f.kvpick.Cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := f.kvpick.Wait(t, 15*time.Second); code != 0 {
		t.Fatalf("exit code %d after SIGTERM", code)
	}
}

// A bad configuration stops start-up with the field path and reason.
func TestBadConfigStopsStartup(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "bad.yaml")
	os.WriteFile(cfg, []byte("router:\n  mode: fastest\nkv:\n  blockSize: 5000\n"), 0o644) //nolint:errcheck
	p := testutil.Start(t, testutil.Binary(t, "kvpick"), "--config", cfg, "--endpoints-file", cfg)
	p.WaitFor(t, regexp.MustCompile(`(router.mode: unknown mode "fastest")`), 20*time.Second)
	p.WaitFor(t, regexp.MustCompile(`(kv.blockSize: must be between 1 and 4096)`), 5*time.Second)
	if code := p.Wait(t, 10*time.Second); code != 2 {
		t.Fatalf("exit code %d, want 2", code)
	}
}

// readReady waits for kvpick's --ready-file and returns the addresses in it.
func readReady(t testing.TB, p *testutil.Proc, path string, d time.Duration) map[string]string {
	t.Helper()
	return testutil.ReadReady(t, p, path, d)
}

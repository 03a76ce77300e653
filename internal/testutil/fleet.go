package testutil

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

var simListening = regexp.MustCompile(`modelsim listening on (127\.0\.0\.1:\d+)`)

// Sim is a modelsim process on fixed loopback ports (HTTP, KV events PUB and
// replay), so a test can kill it and start it again where the picker expects
// it, as an engine pod restarts.
type Sim struct {
	Name                      string
	Port, PubPort, ReplayPort int
	Args                      []string // extra modelsim flags
	Proc                      *Proc
	bin                       string
}

// StartSim runs modelsim serving model "m" on free ports with KV events and
// replay on, plus extra flags.
func StartSim(t testing.TB, name string, extra ...string) *Sim {
	t.Helper()
	s := &Sim{Name: name, Port: FreePort(t), PubPort: FreePort(t), ReplayPort: FreePort(t), Args: extra,
		bin: Binary(t, "modelsim")}
	s.Start(t)
	return s
}

// Start (re)starts the process on the sim's ports and waits until it listens.
func (s *Sim) Start(t testing.TB) {
	t.Helper()
	args := append([]string{"--port", strconv.Itoa(s.Port), "--model", "m",
		"--kv-events-endpoint", s.pub(), "--kv-events-replay-endpoint", s.replay()}, s.Args...)
	for i := 0; ; i++ { // a port the previous process held may take a moment to free
		s.Proc = Start(t, s.bin, args...)
		if s.waitListening(20 * time.Second) {
			return
		}
		if i == 20 {
			t.Fatalf("%s did not start on its ports:\n%s", s.Name, s.Proc.Output())
		}
		s.Proc.Cmd.Process.Kill() //nolint:errcheck // it may have exited already
		time.Sleep(100 * time.Millisecond)
	}
}

func (s *Sim) waitListening(d time.Duration) bool {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if simListening.MatchString(s.Proc.Output()) {
			return true
		}
		select {
		case <-s.Proc.exit:
			return false
		case <-time.After(20 * time.Millisecond):
		}
	}
	return false
}

// Kill ends the process at once (SIGKILL: no graceful shutdown, as a crash).
func (s *Sim) Kill(t testing.TB) {
	t.Helper()
	s.Proc.Cmd.Process.Kill() //nolint:errcheck // it may have exited already
	s.Proc.Wait(t, 10*time.Second)
}

// Addr is the endpoint key the picker uses for the sim.
func (s *Sim) Addr() string { return fmt.Sprintf("127.0.0.1:%d", s.Port) }

func (s *Sim) pub() string    { return fmt.Sprintf("tcp://127.0.0.1:%d", s.PubPort) }
func (s *Sim) replay() string { return fmt.Sprintf("tcp://127.0.0.1:%d", s.ReplayPort) }

// WriteEndpoints writes a standalone endpoints file listing sims.
func WriteEndpoints(t testing.TB, path string, sims []*Sim) { WriteEndpointsWith(t, path, sims, "") }

// WriteEndpointsWith is WriteEndpoints with extra YAML flow-map fields for
// every endpoint (e.g. "capacity: {maxBatchedTokens: 32768}"); "" adds none.
func WriteEndpointsWith(t testing.TB, path string, sims []*Sim, extra string) {
	t.Helper()
	if extra != "" {
		extra = ", " + extra
	}
	var b strings.Builder
	b.WriteString("endpoints:\n")
	for _, s := range sims {
		fmt.Fprintf(&b, "- {name: %s, address: 127.0.0.1, port: %d, models: [m], kvEvents: %q, kvEventsReplay: %q%s}\n",
			s.Name, s.Port, s.pub(), s.replay(), extra)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Picker is a running kvpick process and its bound addresses.
type Picker struct {
	Proc          *Proc
	GRPC, Metrics string
	Started       time.Time // when the process was started
}

// StartPicker runs kvpick in plaintext on free ports with args and waits for
// its ready file.
func StartPicker(t testing.TB, args ...string) *Picker {
	t.Helper()
	ready := filepath.Join(t.TempDir(), "ready.json")
	all := append([]string{"--grpc-addr", "127.0.0.1:0", "--metrics-addr", "127.0.0.1:0", "--plaintext",
		"--ready-file", ready}, args...)
	p := &Picker{Started: time.Now()}
	p.Proc = Start(t, Binary(t, "kvpick"), all...)
	addrs := ReadReady(t, p.Proc, ready, 30*time.Second)
	p.GRPC, p.Metrics = addrs["grpc"], addrs["metrics"]
	if p.GRPC == "" || p.Metrics == "" {
		t.Fatalf("ready file %v lacks an address", addrs)
	}
	return p
}

// Metric is the sum of p's series named name whose labels contain every one
// of match (e.g. `endpoint="127.0.0.1:8000"`).
func (p *Picker) Metric(t testing.TB, name string, match ...string) float64 {
	t.Helper()
	text, err := MetricsText(p.Metrics)
	if err != nil {
		t.Fatal(err)
	}
	return SumSeries(text, name, match...)
}

// MetricsText fetches the Prometheus text page at addr/metrics.
func MetricsText(addr string) (string, error) {
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get("http://" + addr + "/metrics")
	if err != nil {
		return "", fmt.Errorf("metrics of %s: %w", addr, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", fmt.Errorf("metrics of %s: %w", addr, err)
	}
	return string(body), nil
}

// SumSeries adds the values of the series in a Prometheus text page named
// name whose label set contains every one of match.
func SumSeries(text, name string, match ...string) float64 {
	total := 0.0
	for _, line := range strings.Split(text, "\n") {
		rest, ok := strings.CutPrefix(line, name)
		if !ok || (rest != "" && rest[0] != ' ' && rest[0] != '{') || !containsAll(rest, match) {
			continue
		}
		v, err := strconv.ParseFloat(line[strings.LastIndex(line, " ")+1:], 64)
		if err == nil {
			total += v
		}
	}
	return total
}

func containsAll(s string, subs []string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

// ReadReady waits for kvpick's --ready-file and returns the addresses in it.
func ReadReady(t testing.TB, p *Proc, path string, d time.Duration) map[string]string {
	t.Helper()
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		data, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		var addrs map[string]string
		if err := json.Unmarshal(data, &addrs); err != nil {
			t.Fatalf("ready file %q: %v", data, err)
		}
		return addrs
	}
	t.Fatalf("no ready file after %v; output:\n%s", d, p.Output())
	return nil
}

// Eventually polls cond every 20 ms until it holds or d passes (then fails
// the test naming what), and returns how long it took.
func Eventually(t testing.TB, what string, d time.Duration, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for !cond() {
		if time.Since(start) > d {
			t.Fatalf("no %s within %v", what, d)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return time.Since(start)
}

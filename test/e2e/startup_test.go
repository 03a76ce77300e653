package e2e

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kvpick/kvpick/internal/testutil"
)

// Every binary's --help starts with one line saying what it is, and exits 0.
func TestHelpSaysWhatEachBinaryIs(t *testing.T) {
	for _, name := range []string{"kvpick", "modelsim", "routebench", "gatewaysim"} {
		t.Run(name, func(t *testing.T) {
			p := testutil.Start(t, testutil.Binary(t, name), "--help")
			first := p.WaitFor(t, regexp.MustCompile(`^(`+name+`: .*)`), 20*time.Second)
			if code := p.Wait(t, 20*time.Second); code != 0 {
				t.Fatalf("--help exit %d", code)
			}
			if !strings.HasPrefix(p.Output(), first) || len(first) < len(name)+30 {
				t.Fatalf("first line %q is not a description", first)
			}
		})
	}
}

// A bad configuration stops kvpick before it listens: plain text, every problem with its path and line, exit 2.
func TestStartupErrorsArePlainTextExit2(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	cfg := write("bad.yaml", "router:\n  MODE: random\n  kvCost:\n    overlapWeight: high\nkv:\n  predictedTTL: 2 minutes\n")
	eps := write("eps.yaml", "endpoints:\n  - {name: a, address: 127.0.0.1, port: 8000}\n  - {name: b, address: 127.0.0.1, port: http}\n")
	cases := []struct {
		name string
		args []string
		want []string
	}{
		{"config", []string{"--config", cfg, "--plaintext"}, []string{
			`router.MODE: unknown field: keys are case-sensitive, did you mean "mode"? (line 2)`,
			`router.kvCost.overlapWeight: want a number, got "high" (line 4)`,
			`kv.predictedTTL: want a duration such as "120s"`}},
		{"endpoints file", []string{"--endpoints-file", eps, "--plaintext"}, []string{`endpoints[1].port: want an integer, got "http" (line 3)`}},
		{"flag", []string{"--grpc-adr", ":1"}, []string{"flag provided but not defined: -grpc-adr (run 'kvpick --help' for the flags)"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := testutil.Start(t, testutil.Binary(t, "kvpick"), tc.args...)
			p.WaitFor(t, regexp.MustCompile(regexp.QuoteMeta(tc.want[len(tc.want)-1])), 20*time.Second)
			if code := p.Wait(t, 20*time.Second); code != 2 {
				t.Fatalf("exit %d, want 2", code)
			}
			out := p.Output()
			if !strings.HasPrefix(out, "kvpick: ") || strings.Contains(out, `{"`) {
				t.Errorf("want plain text starting with the binary's name, got:\n%s", out)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
		})
	}
}

// A config's relative endpoints.file is read from the config's folder; an empty list starts with a warning.
func TestConfigRelativePathAndEmptyEndpoints(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "eps.yaml"), []byte("endpoints: []\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "kvpick.yaml")
	if err := os.WriteFile(cfg, []byte("endpoints:\n  file: eps.yaml\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ready := filepath.Join(dir, "ready.json")
	p := testutil.Start(t, testutil.Binary(t, "kvpick"), "--config", cfg, "--plaintext", "--grpc-addr", "127.0.0.1:0",
		"--metrics-addr", "off", "--ready-file", ready)
	p.WaitFor(t, regexp.MustCompile(`WARNING: the endpoints file lists no endpoints`), 20*time.Second)
	if addrs := readReady(t, p, ready, 20*time.Second); addrs["grpc"] == "" {
		t.Fatalf("ready file names no grpc address: %v", addrs)
	}
}

// --enable-pprof serves Go's profiles beside /metrics; without it there are none.
func TestPprofOnlyWhenEnabled(t *testing.T) {
	dir := t.TempDir()
	eps := filepath.Join(dir, "eps.yaml")
	if err := os.WriteFile(eps, []byte("endpoints:\n- address: 127.0.0.1\n  port: 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	get := func(addr, path string) (int, string) {
		c := http.Client{Timeout: 10 * time.Second}
		resp, err := c.Get("http://" + addr + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	on := testutil.StartPicker(t, "--endpoints-file", eps, "--enable-pprof")
	if code, body := get(on.Metrics, "/debug/pprof/goroutine?debug=1"); code != http.StatusOK || !strings.Contains(body, "goroutine profile") {
		t.Fatalf("with --enable-pprof: %d %.80q", code, body)
	}
	if code, _ := get(on.Metrics, "/metrics"); code != http.StatusOK {
		t.Fatalf("metrics beside pprof: %d", code)
	}
	off := testutil.StartPicker(t, "--endpoints-file", eps)
	if code, _ := get(off.Metrics, "/debug/pprof/goroutine?debug=1"); code != http.StatusNotFound {
		t.Fatalf("without --enable-pprof: %d, want 404", code)
	}
}

// Package modelsim_test runs the modelsim binary as a separate process, the
// way scripts and the end-to-end tests use it.
package modelsim_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// startModelsim builds and starts modelsim on a free port and returns its
// base URL once it printed its listening line.
func startModelsim(t *testing.T, args ...string) (string, *exec.Cmd) {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "modelsim")
	build := exec.Command("go", "build", "-o", bin, "github.com/kvpick/kvpick/cmd/modelsim")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, append([]string{"--port", "0", "--step-overhead", "500us"}, args...)...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() }) //nolint:errcheck
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if a, ok := strings.CutPrefix(sc.Text(), "modelsim listening on "); ok {
				addr <- a
			}
		}
	}()
	select {
	case a := <-addr:
		return "http://" + a, cmd
	case <-time.After(20 * time.Second):
		t.Fatal("modelsim did not print its listening address")
		return "", nil
	}
}

func cachedTokens(t *testing.T, url, prompt string) int {
	t.Helper()
	body := fmt.Sprintf(`{"model":"modelsim","prompt":%q,"max_tokens":2}`, prompt)
	resp, err := http.Post(url+"/v1/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var r struct {
		Usage struct {
			Details struct {
				Cached int `json:"cached_tokens"`
			} `json:"prompt_tokens_details"`
		} `json:"usage"`
	}
	if err := json.Unmarshal(data, &r); err != nil || resp.StatusCode != 200 {
		t.Fatalf("status %d body %s", resp.StatusCode, data)
	}
	return r.Usage.Details.Cached
}

func TestProcessServesHangupResetsAndTermStops(t *testing.T) {
	url, cmd := startModelsim(t)
	prompt := strings.Repeat("a prompt long enough to fill several blocks ", 8)
	cachedTokens(t, url, prompt)
	if n := cachedTokens(t, url, prompt); n == 0 {
		t.Fatal("no prefix cache hit on the repeated prompt")
	}
	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for cachedTokens(t, url, prompt) != 0 {
		if time.Now().After(deadline) {
			t.Fatal("SIGHUP did not clear the prefix cache")
		}
		time.Sleep(20 * time.Millisecond)
		// Each probe re-caches the prompt; the reset must come from a new signal.
		cmd.Process.Signal(syscall.SIGHUP) //nolint:errcheck
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit after SIGTERM: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("modelsim did not exit after SIGTERM")
	}
}

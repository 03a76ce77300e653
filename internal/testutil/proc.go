// Package testutil holds fixtures shared by cross-process tests: building the
// project's binaries once and running them as real processes.
package testutil

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sync"
	"testing"
	"time"
)

var (
	buildMu  sync.Mutex
	buildDir string
	built    = map[string]string{}
)

// Binary builds ./cmd/<name> once per test process and returns its path.
func Binary(t testing.TB, name string) string {
	t.Helper()
	buildMu.Lock()
	defer buildMu.Unlock()
	if p, ok := built[name]; ok {
		return p
	}
	if buildDir == "" {
		d, err := os.MkdirTemp("", "kvpick-bin-")
		if err != nil {
			t.Fatal(err)
		}
		buildDir = d
	}
	out := filepath.Join(buildDir, name)
	cmd := exec.Command("go", "build", "-o", out, "github.com/kvpick/kvpick/cmd/"+name)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build %s: %v\n%s", name, err, b)
	}
	built[name] = out
	return out
}

// RunRemovingBinaries runs a package's tests (call it from TestMain) and
// then deletes the binaries Binary built: each test process builds its own
// (about 150 MB per package), and left behind they fill a runner's disk.
func RunRemovingBinaries(m *testing.M) int {
	code := m.Run()
	buildMu.Lock()
	defer buildMu.Unlock()
	if buildDir != "" {
		os.RemoveAll(buildDir) //nolint:errcheck // best effort: a leftover is only disk
		buildDir, built = "", map[string]string{}
	}
	return code
}

// Proc is a running process whose combined output is scanned for lines.
type Proc struct {
	Cmd   *exec.Cmd
	mu    sync.Mutex
	lines []string
	cond  *sync.Cond
	done  bool
	exit  chan struct{}
}

// Start runs bin with args; the process is killed when the test ends.
func Start(t testing.TB, bin string, args ...string) *Proc {
	t.Helper()
	p := &Proc{Cmd: exec.Command(bin, args...), exit: make(chan struct{})}
	p.cond = sync.NewCond(&p.mu)
	r, w := io.Pipe()
	p.Cmd.Stdout, p.Cmd.Stderr = w, w
	if err := p.Cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go p.scan(r)
	go func() {
		p.Cmd.Wait() //nolint:errcheck // the exit code is read through Wait
		w.Close()
		close(p.exit)
	}()
	t.Cleanup(func() {
		p.Cmd.Process.Kill() //nolint:errcheck // may have exited already
		if t.Failed() {
			t.Logf("output of %s:\n%s", filepath.Base(bin), p.Output())
		}
	})
	return p
}

func (p *Proc) scan(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		p.mu.Lock()
		p.lines = append(p.lines, sc.Text())
		p.cond.Broadcast()
		p.mu.Unlock()
	}
	p.mu.Lock()
	p.done = true
	p.cond.Broadcast()
	p.mu.Unlock()
}

// WaitFor returns the first submatch of re in the output, waiting up to d.
func (p *Proc) WaitFor(t testing.TB, re *regexp.Regexp, d time.Duration) string {
	t.Helper()
	timer := time.AfterFunc(d, func() { p.mu.Lock(); p.cond.Broadcast(); p.mu.Unlock() })
	defer timer.Stop()
	deadline := time.Now().Add(d)
	p.mu.Lock()
	defer p.mu.Unlock()
	for seen := 0; ; {
		for ; seen < len(p.lines); seen++ {
			if m := re.FindStringSubmatch(p.lines[seen]); m != nil {
				return m[len(m)-1]
			}
		}
		if p.done || time.Now().After(deadline) {
			t.Fatalf("no line matching %q within %s", re, d)
		}
		p.cond.Wait()
	}
}

// Wait waits up to d for the process to exit and returns its exit code.
func (p *Proc) Wait(t testing.TB, d time.Duration) int {
	t.Helper()
	select {
	case <-p.exit:
		return p.Cmd.ProcessState.ExitCode()
	case <-time.After(d):
		t.Fatalf("%s still running after %s", filepath.Base(p.Cmd.Path), d)
		return -1
	}
}

// Output is everything the process printed so far.
func (p *Proc) Output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := ""
	for _, l := range p.lines {
		out += l + "\n"
	}
	return out
}

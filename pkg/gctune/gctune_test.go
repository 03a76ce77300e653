package gctune

import (
	"os"
	"path/filepath"
	"runtime/debug"
	"testing"
)

// cgroupDir writes a fake cgroup tree: file (relative) holding content; "" writes nothing.
func cgroupDir(t *testing.T, file, content string) string {
	dir := t.TempDir()
	if file != "" {
		p := filepath.Join(dir, file)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestContainerLimit(t *testing.T) {
	tests := []struct {
		name, file, content string
		want                int64
		ok                  bool
	}{
		{"v2 limit", "memory.max", "2147483648\n", 2 << 30, true},
		{"v2 unlimited", "memory.max", "max\n", 0, false},
		{"v1 limit", "memory/memory.limit_in_bytes", "1073741824\n", 1 << 30, true},
		{"v1 unlimited", "memory/memory.limit_in_bytes", "9223372036854771712\n", 0, false},
		{"garbage", "memory.max", "lots", 0, false},
		{"none", "", "", 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := ContainerLimit(cgroupDir(t, tc.file, tc.content))
			if got != tc.want || ok != tc.ok {
				t.Fatalf("ContainerLimit = %d, %v; want %d, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestApply(t *testing.T) {
	for _, k := range []string{"GOGC", "GOMEMLIMIT"} { // restored after the test; unset so the caller's do not leak in
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
	oldPct := debug.SetGCPercent(100)
	oldLimit := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetGCPercent(oldPct); debug.SetMemoryLimit(oldLimit) })
	pct := func(v int) *int { return &v }
	noCgroup := t.TempDir()
	withCgroup := cgroupDir(t, "memory.max", "1000000000")
	tests := []struct {
		name      string
		env       map[string]string
		percent   *int
		limit     int64
		root      string
		wantPct   int
		wantLimit int64
		source    string
	}{
		{"config applies", nil, pct(400), 0, noCgroup, 400, oldLimit, "none"},
		{"limit applies", nil, pct(250), 1 << 30, noCgroup, 250, 1 << 30, "config"},
		{"nil percent keeps the runtime's", nil, nil, 0, noCgroup, 250, 1 << 30, "none"},
		{"container limit, 90%", nil, pct(400), 0, withCgroup, 400, 900000000, "container"},
		{"config beats container", nil, pct(400), 1 << 29, withCgroup, 400, 1 << 29, "config"},
		{"GOMEMLIMIT beats container", map[string]string{"GOMEMLIMIT": "1GiB"}, pct(400), 0, withCgroup, 400, 1 << 29, "env"},
		{"GOGC env wins", map[string]string{"GOGC": "150"}, pct(800), 0, noCgroup, 400, 1 << 29, "none"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			s := Apply(tc.percent, tc.limit, tc.root)
			_, gcEnv := tc.env["GOGC"]
			if s.GCPercent != tc.wantPct || s.MemoryLimitBytes != tc.wantLimit || s.LimitSource != tc.source || s.GCFromEnv != gcEnv {
				t.Fatalf("got %+v, want percent %d limit %d source %s", s, tc.wantPct, tc.wantLimit, tc.source)
			}
			if got := debug.SetGCPercent(tc.wantPct); got != tc.wantPct {
				t.Fatalf("runtime GC percent %d, want %d", got, tc.wantPct)
			}
		})
	}
}

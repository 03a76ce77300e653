package gctune

import (
	"os"
	"runtime/debug"
	"testing"
)

func TestApply(t *testing.T) {
	t.Setenv("GOGC", "") // restored after the test; unset below so the caller's environment does not leak in
	os.Unsetenv("GOGC")
	oldPct := debug.SetGCPercent(100)
	oldLimit := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetGCPercent(oldPct); debug.SetMemoryLimit(oldLimit) })
	pct := func(v int) *int { return &v }
	tests := []struct {
		name      string
		env       string // GOGC; "" = unset
		percent   *int
		limit     int64
		wantPct   int
		wantLimit int64
	}{
		{"config applies", "", pct(400), 0, 400, oldLimit},
		{"limit applies", "", pct(250), 1 << 30, 250, 1 << 30},
		{"nil percent keeps the runtime's", "", nil, 0, 250, 1 << 30},
		{"off with a limit", "", pct(-1), 1 << 29, -1, 1 << 29},
		{"GOGC env wins", "150", pct(400), 0, -1, 1 << 29},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.env != "" {
				t.Setenv("GOGC", tc.env)
			}
			s := Apply(tc.percent, tc.limit)
			if s.GCPercent != tc.wantPct || s.MemoryLimitBytes != tc.wantLimit || s.FromEnv != (tc.env != "") {
				t.Fatalf("got %+v, want percent %d limit %d", s, tc.wantPct, tc.wantLimit)
			}
			if got := debug.SetGCPercent(tc.wantPct); got != tc.wantPct {
				t.Fatalf("runtime GC percent %d, want %d", got, tc.wantPct)
			}
		})
	}
}

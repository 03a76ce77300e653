package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeReplays writes one grid per replay into dir/jN, as hack/jitter-grid.sh
// does; every workload but the first holds level at every seed.
func writeReplays(t *testing.T, level map[string]figures, first []map[string]figures) string {
	t.Helper()
	dir := t.TempDir()
	for k, f := range first {
		g := writeGrid(t, []int{1}, level, f)
		if err := os.Rename(g, filepath.Join(dir, "j"+string(rune('1'+k)))); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestJitterTable: kv 2.6 % above round-robin in one replay and 2.5 % below
// it in the other is a miss in the first alone, level on the means (0.980
// each); kv moved by 4.2 % (1.00 over 0.96) between the replays,
// round-robin by 1.0 %.
func TestJitterTable(t *testing.T) {
	level := map[string]figures{"kv": {1, 2}, "round-robin": {1, 2}}
	dir := writeReplays(t, level, []map[string]figures{
		{"kv": {1.00, 2}, "round-robin": {0.975, 2}},
		{"kv": {0.96, 2}, "round-robin": {0.985, 2}},
	})
	got := output(t, dir, "jitter")
	for _, want := range []string{
		"| brief | 1 | 0.980 (+4 %) | +0.0 % (round-robin) | +0.0 % (round-robin) | 2.000 (+0 %) |",
		"2 replays (j1, j2), seeds [1], 18 cells: on the means over the replays kv is within 2 % of the best of every policy in 18, " +
			"of the non-kv policies in 18; kv's own figure moved by more than 2 % over the replays in 1",
		"moved by more than 2 % over the replays: kv 1, round-robin 0",
		"j1 alone: within 2 % of every policy in 17, of the non-kv policies in 17",
		"j2 alone: within 2 % of every policy in 18, of the non-kv policies in 18",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("jitter table has no %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "seed 1 p95: kv") {
		t.Errorf("a cell level on the means is listed as a miss:\n%s", got)
	}

	// 5 % above on the means is a miss, listed with its figures.
	dir = writeReplays(t, level, []map[string]figures{
		{"kv": {1.05, 2}, "round-robin": {1, 2}},
		{"kv": {1.05, 2}, "round-robin": {1, 2}},
	})
	if got := output(t, dir, "jitter"); !strings.Contains(got, "brief seed 1 p95: kv 1.050, +5.0 % against round-robin's 1.000") {
		t.Errorf("no miss listed:\n%s", got)
	}
}

// TestJitterLoadErrors: one replay, or replays of different grids, are errors.
func TestJitterLoadErrors(t *testing.T) {
	level := map[string]figures{"kv": {1, 2}, "round-robin": {1, 2}}
	one := writeReplays(t, level, []map[string]figures{level})
	if err := run(&bytes.Buffer{}, one, "jitter"); err == nil || !strings.Contains(err.Error(), "two or more jN") {
		t.Errorf("one replay: err %v", err)
	}
	mixed := writeReplays(t, level, []map[string]figures{level})
	more := map[string]figures{"kv": {1, 2}, "round-robin": {1, 2}, "random": {1, 2}}
	if err := os.Rename(writeGrid(t, []int{1}, more, more), filepath.Join(mixed, "j2")); err != nil {
		t.Fatal(err)
	}
	if err := run(&bytes.Buffer{}, mixed, "jitter"); err == nil || !strings.Contains(err.Error(), "replay the same grid") {
		t.Errorf("different policies: err %v", err)
	}
}

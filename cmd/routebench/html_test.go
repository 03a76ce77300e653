package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The page lists each report's table (kv highlighted), its figures relative to the page, and the live text escaped.
func TestWriteIndex(t *testing.T) {
	dir := t.TempDir()
	o, err := parseFlags([]string{"-scenario", "shared-prefix", "-requests", "120", "-endpoints", "2",
		"-policies", "round-robin,kv", "-out", filepath.Join(dir, "rb"), "-rate", "3"})
	if err != nil {
		t.Fatal(err)
	}
	if err := run(o); err != nil {
		t.Fatal(err)
	}
	live := filepath.Join(dir, "live.txt")
	if err := os.WriteFile(live, []byte("table\nverdict: kv <better>\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	page := filepath.Join(dir, "index.html")
	if err := writeIndex(page, o.out, live); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	html := string(b)
	for _, want := range []string{`<section id="shared-prefix">`, `<tr class="kv"><td>kv</td>`, `<td>round-robin</td>`,
		`<img src="rb/shared-prefix-ttft.png"`, `<img src="rb/shared-prefix-ttft-cdf.png"`, "verdict: kv &lt;better&gt;",
		"data-missing-images", `<p class="verdict">Live fleet on loopback, verdict: kv &lt;better&gt;`,
		`<p class="headline">kv against round-robin, TTFT p50 `} {
		if !strings.Contains(html, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	// a figure from an earlier run (older than its report) is not shown
	stale := filepath.Join(o.out, "shared-prefix-pending-tokens.svg")
	if err := os.WriteFile(stale, []byte("<svg/>"), 0o600); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(stale, old, old); err != nil {
		t.Fatal(err)
	}
	if err := writeIndex(page, o.out, ""); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(page); strings.Contains(string(b), "pending-tokens") {
		t.Fatal("page shows a stale figure")
	}
	if err := writeIndex(page, t.TempDir(), ""); err == nil || !strings.Contains(err.Error(), "no routebench JSON reports") {
		t.Fatalf("empty folder: %v", err)
	}
}

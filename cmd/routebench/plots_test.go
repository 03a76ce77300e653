package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kvpick/kvpick/pkg/fleetsim"
)

func fakeReport(name string, p95 map[string]float64) *report {
	r := &report{name: name}
	for _, pol := range []string{"round-robin", "random", "least-loaded", "kv", "kv+queue", "gaie-default", "least-queue"} {
		v, ok := p95[pol]
		if !ok {
			continue
		}
		res := &fleetsim.Result{Policy: pol, Summary: fleetsim.Summary{Policy: pol, TTFTP50: fleetsim.Seconds(v / 3), TTFTP95: fleetsim.Seconds(v), TTFTP99: fleetsim.Seconds(v * 1.5), TTFTTargetSeconds: 1}}
		for i := range 5 {
			at := time.Duration(i) * 500 * time.Millisecond
			res.Series = append(res.Series, fleetsim.Sample{At: at, PrefillDue: 1000 * i})
			res.Records = append(res.Records, fleetsim.Record{Arrival: at, First: at + time.Duration(v*float64(i+1)/5*1e9), Finish: at + 2*time.Second})
		}
		r.results = append(r.results, res)
	}
	return r
}

// The CDF compares round-robin, kv and the two baselines with the lowest p95, never another kv mode.
func TestCDFPolicies(t *testing.T) {
	cases := []struct {
		p95  map[string]float64
		want string
	}{
		{map[string]float64{"round-robin": 2, "random": 3, "least-loaded": 1.5, "kv": 1, "kv+queue": 0.9, "gaie-default": 1.2, "least-queue": 1.4},
			"round-robin,kv,gaie-default,least-queue"},
		{map[string]float64{"kv": 1, "random": 3}, "kv,random"},
		{map[string]float64{"kv+queue": 1}, ""},
	}
	for _, tc := range cases {
		if got := strings.Join(cdfPolicies(fakeReport("x", tc.p95)), ","); got != tc.want {
			t.Errorf("cdfPolicies(%v) = %s, want %s", tc.p95, got, tc.want)
		}
	}
}

// Every figure renders in both formats; the pending-tokens figure needs an import burst and round-robin, kv or kv+queue.
func TestWritePlotsFormats(t *testing.T) {
	dir := t.TempDir()
	r := fakeReport("brief-import", map[string]float64{"round-robin": 2, "kv": 1, "random": 3})
	for _, format := range []string{"png", "svg"} {
		paths, err := writePlots(filepath.Join(dir, "b"), format, r)
		if err != nil {
			t.Fatal(err)
		}
		if len(paths) != 3 {
			t.Fatalf("%s: wrote %v, want 3 figures", format, paths)
		}
		for _, p := range paths {
			b, err := os.ReadFile(p)
			if err != nil || !strings.HasSuffix(p, "."+format) || (format == "svg") != strings.Contains(string(b), "<svg") {
				t.Errorf("%s: %v", p, err)
			}
		}
	}
	paths, err := writePlots(filepath.Join(dir, "c"), "png", fakeReport("brief-import", map[string]float64{"random": 3}))
	if err != nil || len(paths) != 2 {
		t.Fatalf("no comparable policies for pending tokens: %v %v", paths, err)
	}
	paths, err = writePlots(filepath.Join(dir, "e"), "png", fakeReport("brief", map[string]float64{"kv": 1, "round-robin": 2}))
	if err != nil || len(paths) != 2 || strings.Contains(strings.Join(paths, ","), "pending") {
		t.Fatalf("steady load has no pending-tokens figure: %v %v", paths, err)
	}
	none := fakeReport("y", map[string]float64{"kv": 1})
	none.results[0].Records = nil // nothing completed: no CDF, and no panic on its log scale
	if paths, err := writePlots(filepath.Join(dir, "d"), "png", none); err != nil || len(paths) != 1 {
		t.Fatalf("no completed requests: %v %v", paths, err)
	}
}

func TestBinnedAverages(t *testing.T) {
	s := []fleetsim.Sample{{At: 0, PrefillDue: 1000}, {At: 500 * time.Millisecond, PrefillDue: 3000, QueuedTokens: 2000},
		{At: 1200 * time.Millisecond, PrefillDue: 4000}}
	pts := binned(s)
	if len(pts) != 2 || pts[0].X != 0.5 || pts[0].Y != 3 || pts[1].Y != 4 {
		t.Fatalf("binned = %v", pts)
	}
}

func TestPlainTicks(t *testing.T) {
	cases := []struct {
		min, max float64
		want     string
	}{
		{0, 2.6, "0,0.5,1,1.5,2,2.5"},
		{0, 8.8, "0,2,4,6,8"},
		{90, 200, "100,120,140,160,180,200"},
	}
	for _, tc := range cases {
		var got []string
		for _, tk := range plainTicks(tc.min, tc.max) {
			got = append(got, tk.Label)
		}
		if strings.Join(got, ",") != tc.want {
			t.Errorf("plainTicks(%v, %v) = %v, want %s", tc.min, tc.max, got, tc.want)
		}
	}
}

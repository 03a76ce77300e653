package main

import (
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kvpick/kvpick/internal/testutil"
	"github.com/kvpick/kvpick/pkg/engine"
)

func TestParseFlags(t *testing.T) {
	o, err := parseFlags([]string{"-scenario", "trace", "-rate-scale", "2", "-events-delay", "10ms"})
	if err != nil {
		t.Fatal(err)
	}
	if o.endpoints != 8 || o.rateScale != 2 || o.eventsDelay != 10*time.Millisecond {
		t.Errorf("parsed %+v", o)
	}
	if o, _ := parseFlags(nil); o.endpoints != 2 || o.scenario != "brief" {
		t.Errorf("brief defaults: %+v", o)
	}
	for _, bad := range [][]string{{"-endpoints", "-1"}, {"extra"}, {"-nope"}, {"-replicas", "0"}, {"-replica-sync", "yes"}, {"-replica-queue-order", "global"}, {"-jitter", "-1ms"}} {
		if _, err := parseFlags(bad); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}

func TestRunWritesTableFiles(t *testing.T) {
	dir := t.TempDir()
	o, err := parseFlags([]string{"-scenario", "shared-prefix", "-requests", "150", "-endpoints", "2",
		"-policies", "round-robin,kv", "-out", dir, "-rate", "3"})
	if err != nil {
		t.Fatal(err)
	}
	if err := run(o); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(dir, "shared-prefix.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil || len(rows) != 3 || rows[1][0] != "round-robin" || rows[2][0] != "kv" {
		t.Fatalf("csv rows %v, err %v", rows, err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "shared-prefix.json"))
	if err != nil {
		t.Fatal(err)
	}
	var j jsonReport
	if err := json.Unmarshal(b, &j); err != nil || len(j.Results) != 2 || j.Results[1].Completed+j.Results[1].Rejected != 150 {
		t.Fatalf("json %+v, err %v", j, err)
	}
	for _, p := range []string{"-ttft.png", "-ttft-cdf.png"} { // pending tokens: only around an import burst
		b, err := os.ReadFile(filepath.Join(dir, "shared-prefix"+p))
		if err != nil || !strings.HasPrefix(string(b), "\x89PNG") {
			t.Errorf("plot %s missing or not PNG: %v", p, err)
		}
	}
}

func TestUnknownScenarioAndPolicy(t *testing.T) {
	for _, args := range [][]string{{"-scenario", "nope", "-out", ""}, {"-scenario", "burst", "-policies", "nope", "-out", ""},
		{"-scenario", "multiturn", "-kv-session-load", "maybe", "-out", ""}} {
		o, err := parseFlags(args)
		if err != nil {
			t.Fatal(err)
		}
		if err := run(o); err == nil {
			t.Errorf("%v: want an error", args)
		}
	}
}

func TestHeterogeneousFleet(t *testing.T) {
	dir := t.TempDir()
	slow := filepath.Join(dir, "slow.yaml")
	if err := os.WriteFile(slow, []byte("prefillTokensPerSec: 4000\nnumGpuBlocks: 5000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fast := filepath.Join(dir, "fast.yaml")
	if err := os.WriteFile(fast, []byte("prefillTokensPerSec: 40000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	o, err := parseFlags([]string{"-endpoints", "3", "-engine-profile", slow + "," + fast, "-out", ""})
	if err != nil {
		t.Fatal(err)
	}
	fc, err := fleetConfig(o)
	if err != nil {
		t.Fatal(err)
	}
	e := fc.Engines
	if len(e) != 3 || e[0].PrefillTokensPerSec != 4000 || e[0].NumGPUBlocks != 5000 || e[1].PrefillTokensPerSec != 40000 ||
		e[1].NumGPUBlocks != engine.DefaultConfig().NumGPUBlocks || e[2] != e[0] {
		t.Errorf("engines %+v", e)
	}
	o.engineProfile = filepath.Join(dir, "missing.yaml")
	if _, err := fleetConfig(o); err == nil {
		t.Error("missing profile accepted")
	}
}

// TestReplicasFlags: -replicas with sync runs the kv policy as synced
// replicas; a baseline that cannot sync is refused with its reason.
func TestReplicasFlags(t *testing.T) {
	o, err := parseFlags([]string{"-scenario", "shared-prefix", "-requests", "90", "-endpoints", "2", "-policies", "kv",
		"-out", "", "-html", "off", "-rate", "3", "-replicas", "3", "-replica-sync", "on", "-sync-delay", "1ms", "-replica-queue-slack-max", "7ms"})
	if err != nil {
		t.Fatal(err)
	}
	if o.replicas != 3 || o.replicaSync != "on" || o.syncDelay != time.Millisecond || o.queueSlackMax != 7*time.Millisecond {
		t.Fatalf("parsed %+v", o)
	}
	if err := run(o); err != nil {
		t.Fatal(err)
	}
	o.policies = "gaie-default"
	if err := run(o); err == nil || !strings.Contains(err.Error(), "only kvpick policies sync") {
		t.Fatalf("gaie-default as synced replicas: %v", err)
	}
}

// TestJitterMovesArrivalsOnly runs one workload plain and jittered: the same
// requests, each arriving up to the jitter later, and the report says so.
func TestJitterMovesArrivalsOnly(t *testing.T) {
	arrivals := func(extra ...string) ([]float64, jsonReport) {
		dir := t.TempDir()
		args := append([]string{"-scenario", "shared-prefix", "-requests", "120", "-endpoints", "2", "-prefixes", "4",
			"-policies", "kv", "-out", dir, "-rate", "6", "-records", "-no-plots", "-html", "off"}, extra...)
		o, err := parseFlags(args)
		if err != nil {
			t.Fatal(err)
		}
		if err := run(o); err != nil {
			t.Fatal(err)
		}
		var at []float64
		for _, row := range readCSV(t, filepath.Join(dir, "shared-prefix-records.csv"))[1:] {
			v, err := strconv.ParseFloat(row[3], 64) // arrival_s
			if err != nil {
				t.Fatalf("arrival %q: %v", row[3], err)
			}
			at = append(at, v)
		}
		b, err := os.ReadFile(filepath.Join(dir, "shared-prefix.json"))
		if err != nil {
			t.Fatal(err)
		}
		var j jsonReport
		if err := json.Unmarshal(b, &j); err != nil {
			t.Fatal(err)
		}
		return at, j
	}
	plain, pj := arrivals()
	jittered, jj := arrivals("-jitter", "20ms", "-jitter-seed", "3")
	if pj.Jitter != 0 || pj.JitterSeed != 0 || jj.Jitter != 0.02 || jj.JitterSeed != 3 {
		t.Errorf("reports: plain jitter %v seed %d, jittered %v seed %d", pj.Jitter, pj.JitterSeed, jj.Jitter, jj.JitterSeed)
	}
	if len(plain) != 120 || len(jittered) != 120 {
		t.Fatalf("%d and %d records, want 120", len(plain), len(jittered))
	}
	var sp, sj float64
	for i := range plain {
		sp, sj = sp+plain[i], sj+jittered[i]
	}
	// Each arrival moves by [0, 20 ms): the sum by more than nothing and less than 120 x 20 ms.
	if d := sj - sp; d <= 0 || d >= 120*0.02 {
		t.Errorf("arrivals moved by %.4f s in all, want (0, 2.4)", d)
	}
}

// -kv-session-load sets router.kvCost.sessionLoad of the kv policies; empty
// leaves the default.
func TestSessionLoadFlag(t *testing.T) {
	for _, tc := range []struct {
		flag string
		want *bool
	}{{"", nil}, {"on", testutil.Ptr(true)}, {"off", testutil.Ptr(false)}} {
		o, err := parseFlags([]string{"-scenario", "multiturn", "-kv-session-load", tc.flag})
		if err != nil {
			t.Fatal(err)
		}
		po, err := policyOptions(o)
		if err != nil {
			t.Fatalf("%q: %v", tc.flag, err)
		}
		if (po.SessionLoad == nil) != (tc.want == nil) || (po.SessionLoad != nil && *po.SessionLoad != *tc.want) {
			t.Errorf("%q: SessionLoad %v, want %v", tc.flag, po.SessionLoad, tc.want)
		}
	}
}

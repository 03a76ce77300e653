package main

import (
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

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
	for _, bad := range [][]string{{"-endpoints", "-1"}, {"extra"}, {"-nope"}, {"-replicas", "0"}, {"-replica-sync", "yes"}, {"-replica-queue-order", "global"}} {
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
	for _, args := range [][]string{{"-scenario", "nope", "-out", ""}, {"-scenario", "burst", "-policies", "nope", "-out", ""}} {
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

package endpoints

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
)

func TestParseFile(t *testing.T) {
	cases := []struct {
		name, yaml, wantErr string
		want                int
	}{
		{"two endpoints", "endpoints:\n- {address: 10.0.0.1, port: 8000, models: [m]}\n- {address: 10.0.0.2, port: 8000}\n", "", 2},
		{"empty", "endpoints: []\n", "", 0},
		{"bad ip", "endpoints:\n- {address: pod-a, port: 8000}\n", "endpoints[0]: address \"pod-a\" is not an IP", 0},
		{"bad port", "endpoints:\n- {address: 10.0.0.1, port: 0}\n", "port 0 out of range", 0},
		{"duplicate", "endpoints:\n- {address: 10.0.0.1, port: 1}\n- {address: 10.0.0.1, port: 1}\n", "endpoints[1]: 10.0.0.1:1 duplicates endpoints[0]", 0},
		{"unknown field", "endpoints:\n- {address: 10.0.0.1, port: 1, weight: 3}\n", "weight", 0},
		{"bad engine", "endpoints:\n- {address: 10.0.0.1, port: 1, engine: ollama}\n", "engine \"ollama\" unknown", 0},
		{"numeric worker id", "endpoints:\n- {address: 10.0.0.1, port: 1, workerId: 18446744073709551615}\n- {address: 10.0.0.2, port: 1, workerId: \"42\"}\n", "", 2},
		{"named worker id", "endpoints:\n- {address: 10.0.0.1, port: 1, workerId: worker-1}\n", "workerId \"worker-1\" is not a Dynamo worker instance id", 0},
		{"worker id past u64", "endpoints:\n- {address: 10.0.0.1, port: 1, workerId: 18446744073709551616}\n", "is not a Dynamo worker instance id", 0},
		{"negative dp rank", "endpoints:\n- {address: 10.0.0.1, port: 1, dpRank: -1}\n", "dpRank -1 out of range", 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			eps, err := ParseFile([]byte(tc.yaml))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || len(eps) != tc.want {
				t.Fatalf("got %d endpoints, err %v", len(eps), err)
			}
		})
	}
}

func TestSetKeepsLoadAcrossReplace(t *testing.T) {
	s := NewSet()
	a := Endpoint{Address: "10.0.0.1", Port: 8000}
	b := Endpoint{Address: "10.0.0.2", Port: 8000}
	if err := s.Replace([]Endpoint{b, a}); err != nil {
		t.Fatal(err)
	}
	snap := s.Snapshot()
	if snap.List[0].Key() != "10.0.0.1:8000" || snap.List[0].Engine != "vllm" {
		t.Fatalf("not sorted or not defaulted: %+v", snap.List[0])
	}
	s.UpdateLoad("10.0.0.1:8000", Load{Waiting: 3, TotalBlocks: 100, Fresh: true})
	if err := s.Replace([]Endpoint{a}); err != nil {
		t.Fatal(err)
	}
	e, ok := s.Snapshot().Get("10.0.0.1:8000")
	if !ok || e.Load().Waiting != 3 || e.Capacity().TotalBlocks != 100 {
		t.Fatalf("load lost across replace: %+v", e.Load())
	}
	if _, ok := s.Snapshot().Get("10.0.0.2:8000"); ok {
		t.Fatal("removed endpoint still present")
	}
	if snap.Version == s.Snapshot().Version {
		t.Fatal("version did not advance")
	}
	if s.Replace([]Endpoint{a, a}) == nil {
		t.Fatal("duplicate accepted")
	}
	if len(s.Snapshot().List) != 1 {
		t.Fatal("failed replace changed state")
	}
}

func TestServes(t *testing.T) {
	e := Endpoint{Models: []string{"llama"}, LoRAAdapters: []string{"sql"}}
	any := Endpoint{}
	cases := []struct {
		ep             Endpoint
		model, adapter string
		want           bool
	}{
		{e, "llama", "", true}, {e, "qwen", "", false}, {e, "llama", "sql", true},
		{e, "llama", "chat", false}, {any, "whatever", "", true}, {any, "x", "sql", false},
	}
	for _, c := range cases {
		if got := c.ep.Serves(c.model, c.adapter); got != c.want {
			t.Errorf("Serves(%q,%q) = %v", c.model, c.adapter, got)
		}
	}
}

func TestWatchFileReloadsAndKeepsOnError(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "eps.yaml")
	write := func(s string) {
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("endpoints:\n- {address: 127.0.0.1, port: 1}\n")
	s := NewSet()
	src := NewFileSource(path, s)
	if err := src.Load(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go src.Watch(ctx, 5*time.Millisecond, logr.Discard())
	write("endpoints:\n- {address: 127.0.0.1, port: 1}\n- {address: 127.0.0.1, port: 2}\n")
	waitFor(t, func() bool { return len(s.Snapshot().List) == 2 })
	for _, bad := range []string{"endpoints:\n- {address: nope, port: 1}\n", "", " \n"} {
		write(bad)
		time.Sleep(50 * time.Millisecond)
		if len(s.Snapshot().List) != 2 {
			t.Fatalf("file %q replaced the set: %d endpoints", bad, len(s.Snapshot().List))
		}
	}
	write("endpoints: []\n") // none, said explicitly
	waitFor(t, func() bool { return len(s.Snapshot().List) == 0 })
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in 5s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// A u64 worker id survives YAML exactly (no float rounding).
func TestWorkerIDKeepsEveryDigit(t *testing.T) {
	eps, err := ParseFile([]byte("endpoints:\n- {address: 10.0.0.1, port: 1, workerId: 7587889712345678901}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if eps[0].WorkerID != "7587889712345678901" {
		t.Fatalf("workerId = %q", eps[0].WorkerID)
	}
	s := NewSet()
	if err := s.Replace(append(eps, Endpoint{Address: "10.0.0.2", Port: 1})); err != nil {
		t.Fatal(err)
	}
	if err := RequireWorkerIDs(s.Snapshot()); err == nil || !strings.Contains(err.Error(), "10.0.0.2:1") {
		t.Fatalf("RequireWorkerIDs = %v, want the endpoint without an id named", err)
	}
}

// The ecosystem's engine-type names are accepted and mean kvpick's.
func TestEngineAliases(t *testing.T) {
	s := NewSet()
	if err := s.Replace([]Endpoint{{Address: "10.0.0.1", Port: 1, Engine: "trtllm-serve"}, {Address: "10.0.0.2", Port: 1, Engine: "triton-tensorrt-llm"}}); err != nil {
		t.Fatal(err)
	}
	if got := []string{s.Snapshot().List[0].Engine, s.Snapshot().List[1].Engine}; got[0] != "trtllm" || got[1] != "triton" {
		t.Fatalf("engines %v, want [trtllm triton]", got)
	}
	if _, err := ParseFile([]byte("endpoints:\n- {address: 10.0.0.1, port: 1, engine: trtllm-serve}\n")); err != nil {
		t.Fatal(err)
	}
}

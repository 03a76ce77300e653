package main

import (
	"os"
	"path/filepath"
	"testing"
)

// With no -trace the embedded trace is replayed; a given path is read instead.
func TestLoadTrace(t *testing.T) {
	w, err := loadTrace(&options{rateScale: 1, repeat: 1}, 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(w.Requests) != 5 || w.Name != "trace" {
		t.Fatalf("embedded trace: %d requests, name %q", len(w.Requests), w.Name)
	}
	path := filepath.Join(t.TempDir(), "t.jsonl")
	line := `{"timestamp": 0, "input_length": 600, "output_length": 3, "hash_ids": [1, 2]}` + "\n"
	if err := os.WriteFile(path, []byte(line), 0o600); err != nil {
		t.Fatal(err)
	}
	w, err = loadTrace(&options{trace: path, rateScale: 1, repeat: 1}, 0)
	if err != nil || len(w.Requests) != 1 {
		t.Fatalf("file trace: %v, %d requests", err, len(w.Requests))
	}
	if _, err := loadTrace(&options{trace: path + ".missing", rateScale: 1, repeat: 1}, 0); err == nil {
		t.Fatal("a missing trace file must be an error")
	}
}

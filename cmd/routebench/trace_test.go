package main

import (
	"os"
	"path/filepath"
	"testing"
)

// With no -trace the embedded trace is replayed; a given path is read instead.
func TestLoadTrace(t *testing.T) {
	for _, tc := range []struct {
		scenario string
		firstIn  int // the first request's input_length in the embedded file
	}{{"trace", 40160}, {"conversation", 6758}} {
		w, err := loadTrace(&options{scenario: tc.scenario, rateScale: 1, repeat: 1}, 5)
		if err != nil {
			t.Fatal(err)
		}
		if len(w.Requests) != 5 || w.Name != tc.scenario || w.Requests[0].InputLen() != tc.firstIn {
			t.Fatalf("embedded %s trace: %d requests, name %q, first prompt %d tokens (want 5, %q, %d)",
				tc.scenario, len(w.Requests), w.Name, w.Requests[0].InputLen(), tc.scenario, tc.firstIn)
		}
	}
	if _, err := loadTrace(&options{scenario: "conversation", trace: "x.jsonl", rateScale: 1, repeat: 1}, 0); err == nil {
		t.Fatal("-trace with -scenario conversation must be an error (the file would be ignored)")
	}
	path := filepath.Join(t.TempDir(), "t.jsonl")
	line := `{"timestamp": 0, "input_length": 600, "output_length": 3, "hash_ids": [1, 2]}` + "\n"
	if err := os.WriteFile(path, []byte(line), 0o600); err != nil {
		t.Fatal(err)
	}
	w, err := loadTrace(&options{scenario: "trace", trace: path, rateScale: 1, repeat: 1}, 0)
	if err != nil || len(w.Requests) != 1 {
		t.Fatalf("file trace: %v, %d requests", err, len(w.Requests))
	}
	if _, err := loadTrace(&options{scenario: "trace", trace: path + ".missing", rateScale: 1, repeat: 1}, 0); err == nil {
		t.Fatal("a missing trace file must be an error")
	}
}

package main

import (
	"path/filepath"
	"testing"
)

// TestRecordsNamePrefix: -records writes one row per request and policy, each
// naming the shared prefix it starts with, so rows can be grouped by it.
func TestRecordsNamePrefix(t *testing.T) {
	dir := t.TempDir()
	o, err := parseFlags([]string{"-scenario", "shared-prefix", "-requests", "60", "-endpoints", "2", "-prefixes", "3",
		"-prefix-len", "64", "-suffix-len", "16", "-policies", "round-robin,kv", "-rate", "4", "-no-plots", "-html", "off",
		"-records", "-out", dir})
	if err != nil {
		t.Fatal(err)
	}
	if err := run(o); err != nil {
		t.Fatal(err)
	}
	rows := readCSV(t, filepath.Join(dir, "shared-prefix-records.csv"))
	if len(rows) != 1+2*60 || rows[0][len(rows[0])-1] != "prefix" {
		t.Fatalf("%d rows, header %v", len(rows), rows[0])
	}
	prefixes := map[string]int{}
	for _, r := range rows[1:] {
		if len(r) != len(recordColumns) {
			t.Fatalf("row %v", r)
		}
		prefixes[r[len(r)-1]]++
	}
	if len(prefixes) != 3 || prefixes["0"] != 0 {
		t.Errorf("prefixes %v, want the workload's 3", prefixes)
	}
}

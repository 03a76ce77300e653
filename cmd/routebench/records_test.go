package main

import (
	"path/filepath"
	"strconv"
	"testing"
)

// TestRecordsNamePrefix: -records writes one row per request and policy, each
// naming the shared prefix it starts with, so rows can be grouped by it, and
// its end: the last token after the first, end to end no shorter than TTFT.
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
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	if len(rows) != 1+2*60 || len(col) != len(recordColumns) {
		t.Fatalf("%d rows, header %v", len(rows), rows[0])
	}
	num := func(r []string, name string) float64 {
		v, err := strconv.ParseFloat(r[col[name]], 64)
		if err != nil {
			t.Fatalf("%s in %v: %v", name, r, err)
		}
		return v
	}
	prefixes := map[string]int{}
	for _, r := range rows[1:] {
		if len(r) != len(recordColumns) {
			t.Fatalf("row %v", r)
		}
		prefixes[r[col["prefix"]]]++
		if num(r, "finish_s") < num(r, "first_s") || num(r, "e2e_s") < num(r, "ttft_s") || num(r, "ttft_s") < 0 ||
			num(r, "generated") != num(r, "output") || num(r, "output") <= 0 {
			t.Errorf("row %v: end before first token, or output not all generated", r)
		}
	}
	if len(prefixes) != 3 || prefixes["0"] != 0 {
		t.Errorf("prefixes %v, want the workload's 3", prefixes)
	}
}

package main

import (
	"encoding/csv"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"

	"github.com/kvpick/kvpick/pkg/fleetsim"
)

func TestParseSeeds(t *testing.T) {
	good := map[string][]int64{
		"1-3":     {1, 2, 3},
		"4":       {4},
		"1,4,7":   {1, 4, 7},
		"1-2, 9":  {1, 2, 9},
		"5-5":     {5},
		"1-100":   nil, // 100 seeds: the most allowed
		"10,2-3,": {10, 2, 3},
		"9223372036854775806-9223372036854775807": {9223372036854775806, 9223372036854775807},
	}
	for raw, want := range good {
		got, err := parseSeeds(raw)
		if err != nil {
			t.Errorf("%q: %v", raw, err)
			continue
		}
		if want == nil {
			if len(got) != maxSeeds {
				t.Errorf("%q: %d seeds", raw, len(got))
			}
		} else if !reflect.DeepEqual(got, want) {
			t.Errorf("%q: got %v, want %v", raw, got, want)
		}
	}
	for _, bad := range []string{"", ",", "0", "-1", "3-1", "a", "1-b", "1-101", "1,1", "1-3,2", "1-2-3", "1.5"} {
		if got, err := parseSeeds(bad); err == nil {
			t.Errorf("%q accepted: %v", bad, got)
		}
	}
	if _, err := parseFlags([]string{"-seeds", "1-3", "-html-only"}); err == nil {
		t.Error("-seeds with -html-only accepted")
	}
	if _, err := parseFlags([]string{"-seeds", "0"}); err == nil {
		t.Error("-seeds 0 accepted")
	}
}

func TestSeedList(t *testing.T) {
	for want, seeds := range map[string][]int64{"1-9": {1, 2, 3, 4, 5, 6, 7, 8, 9}, "1,3,5": {1, 3, 5}, "2-3,7,9-10": {2, 3, 7, 9, 10}} {
		if got := seedList(seeds); got != want {
			t.Errorf("%v: %q, want %q", seeds, got, want)
		}
	}
}

// TestSeedTable is checked by hand: two seeds, three policies, one of which
// refuses a request at seed 2 (its percentiles there are +Inf).
func TestSeedTable(t *testing.T) {
	inf := fleetsim.Seconds(math.Inf(1))
	sum := func(p string, p95, p99 fleetsim.Seconds, rej int) fleetsim.Summary {
		return fleetsim.Summary{Policy: p, TTFTP95: p95, TTFTP99: p99, E2EP99: 10 * p99, Rejected: rej}
	}
	rows := seedTable([][]fleetsim.Summary{
		{sum("a", 1.00, 2.0, 0), sum("b", 1.01, 2.2, 0), sum("c", 1.10, 1.9, 0)},
		{sum("a", 1.05, 2.0, 0), sum("b", 1.00, 2.0, 0), sum("c", inf, inf, 3)},
	})
	if len(rows) != 3 {
		t.Fatalf("%d rows", len(rows))
	}
	a, b, c := rows[0], rows[1], rows[2]
	near := func(x, y float64) bool { return math.Abs(x-y) < 1e-9 }
	// a: p95 best at seed 1, +5 % at seed 2; p99 2.0 against 1.9 (+5.3 %), then tied best.
	if a.policy != "a" || !near(a.mean95, 1.025) || a.near95 != 1 || !near(a.worst95, 0.05) ||
		!near(a.mean99, 2.0) || a.near99 != 1 || !near(a.worst99, 2.0/1.9-1) || a.seeds != 2 {
		t.Errorf("a: %+v", a)
	}
	// b: p95 +1 % then best (near at both); mean 1.005 is the best mean.
	if b.near95 != 2 || !near(b.worst95, 0.01) || !near(b.meanGap95, 0) || !near(a.meanGap95, 1.025/1.005-1) {
		t.Errorf("b: %+v (a %+v)", b, a)
	}
	// b's p99: 2.2 against 1.9 at seed 1 (+15.8 %), best at seed 2.
	if b.near99 != 1 || !near(b.worst99, 2.2/1.9-1) || !near(b.meanGap99, 2.1/2.0-1) {
		t.Errorf("b p99: %+v", b)
	}
	// End to end (ten times p99 here): a's mean 20 is the best, b's 21 is 5 % above it, c's is +Inf.
	if !near(a.meanE2E99, 20) || !near(a.meanGapE2E99, 0) || !near(b.meanE2E99, 21) || !near(b.meanGapE2E99, 0.05) ||
		!math.IsInf(c.meanE2E99, 1) || !math.IsInf(c.meanGapE2E99, 1) {
		t.Errorf("e2e p99: a %+v, b %+v, c %+v", a, b, c)
	}
	// c refused at seed 2: inf means and gaps, its refusals counted; best p99 at seed 1.
	if !math.IsInf(c.mean95, 1) || !math.IsInf(c.worst95, 1) || !math.IsInf(c.meanGap99, 1) || c.near99 != 1 || c.rejected != 3 {
		t.Errorf("c: %+v", c)
	}
	if g := gap(math.Inf(1), math.Inf(1)); g != 0 {
		t.Errorf("every policy refused: gap %v, want 0", g)
	}
}

// TestRunSeeds: -seeds runs each seed as -seed would, and its table
// averages them.
func TestRunSeeds(t *testing.T) {
	dir := t.TempDir()
	args := []string{"-scenario", "shared-prefix", "-requests", "120", "-endpoints", "2", "-policies", "round-robin,kv",
		"-rate", "4", "-no-plots", "-html", "off"}
	o, err := parseFlags(append(args, "-seeds", "2-3", "-out", dir))
	if err != nil {
		t.Fatal(err)
	}
	if err := runSeeds(o, o.seeds); err != nil {
		t.Fatal(err)
	}
	var mean95 float64
	for _, seed := range []string{"2", "3"} {
		single := t.TempDir()
		o1, err := parseFlags(append(args, "-seed", seed, "-out", single))
		if err != nil {
			t.Fatal(err)
		}
		if err := run(o1); err != nil {
			t.Fatal(err)
		}
		want := readCSV(t, filepath.Join(single, "shared-prefix.csv"))
		got := readCSV(t, filepath.Join(dir, "seed-"+seed, "shared-prefix.csv"))
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("seed %s: -seeds wrote %v, -seed %v", seed, got, want)
		}
		v, _ := strconv.ParseFloat(want[2][2], 64) // kv's p95
		mean95 += v / 2
	}
	rows := readCSV(t, filepath.Join(dir, "shared-prefix-seeds.csv"))
	if len(rows) != 3 || rows[2][0] != "kv" || rows[0][1] != "ttft_p95_mean_s" {
		t.Fatalf("seeds table %v", rows)
	}
	if got, _ := strconv.ParseFloat(rows[2][1], 64); math.Abs(got-mean95) > 1e-3 {
		t.Errorf("kv p95 mean %v, want %v", got, mean95)
	}
	if _, err := os.Stat(filepath.Join(dir, "shared-prefix-seeds.md")); err != nil {
		t.Error(err)
	}
	if o.out != dir || o.collect != nil {
		t.Errorf("runSeeds left options changed: out %q, collect %v", o.out, o.collect)
	}
}

func readCSV(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// FuzzParseSeeds: any -seeds value either errors or gives 1..maxSeeds
// distinct seeds, each at least 1.
func FuzzParseSeeds(f *testing.F) {
	for _, s := range []string{"1-9", "1,4,7", "3-1", "", "0", "1-100", "9223372036854775807", "1-9223372036854775807", "-", ",,"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		seeds, err := parseSeeds(raw)
		if err != nil {
			return
		}
		if len(seeds) == 0 || len(seeds) > maxSeeds {
			t.Fatalf("%q: %d seeds", raw, len(seeds))
		}
		seen := map[int64]bool{}
		for _, s := range seeds {
			if s < 1 || seen[s] {
				t.Fatalf("%q: seed %d in %v", raw, s, seeds)
			}
			seen[s] = true
		}
	})
}

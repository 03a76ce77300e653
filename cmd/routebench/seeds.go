package main

import (
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/kvpick/kvpick/pkg/fleetsim"
)

// maxSeeds bounds -seeds: each seed is a whole run of every policy.
const maxSeeds = 100

// nearBest is how far above the best policy at a seed a percentile may be
// and still count as "near best" (issue 11's target: within 2 %).
const nearBest = 0.02

// parseSeeds reads -seeds: a comma-separated list of seeds or ranges
// ("1-9", "1,4,7", "1-3,8"), each seed at least 1, in the order given,
// no seed twice.
func parseSeeds(raw string) ([]int64, error) {
	var out []int64
	seen := map[int64]bool{}
	add := func(s int64) error {
		if seen[s] {
			return fmt.Errorf("-seeds %q: seed %d twice", raw, s)
		}
		if seen[s] = true; len(seen) > maxSeeds {
			return fmt.Errorf("-seeds %q: more than %d seeds", raw, maxSeeds)
		}
		out = append(out, s)
		return nil
	}
	for _, part := range splitList(raw) {
		lo, hi, isRange := strings.Cut(part, "-")
		a, errA := strconv.ParseInt(lo, 10, 64)
		b, errB := a, error(nil)
		if isRange {
			b, errB = strconv.ParseInt(hi, 10, 64)
		}
		if errA != nil || errB != nil || a < 1 || b < a {
			return nil, fmt.Errorf("-seeds %q: %q is not a seed >= 1 or a range lo-hi with 1 <= lo <= hi", raw, part)
		}
		if b-a >= maxSeeds {
			return nil, fmt.Errorf("-seeds %q: more than %d seeds", raw, maxSeeds)
		}
		for i := int64(0); i <= b-a; i++ { // counted, so a range ending at MaxInt64 stops
			if err := add(a + i); err != nil {
				return nil, err
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("-seeds %q: no seed", raw)
	}
	return out, nil
}

// seedRuns collects each report's summaries, seed by seed, for -seeds.
type seedRuns struct {
	names []string // report names in first-run order
	runs  map[string][][]fleetsim.Summary
}

func (s *seedRuns) add(name string, results []*fleetsim.Result) {
	if s.runs == nil {
		s.runs = map[string][][]fleetsim.Summary{}
	}
	if _, ok := s.runs[name]; !ok {
		s.names = append(s.names, name)
	}
	sums := make([]fleetsim.Summary, len(results))
	for i, r := range results {
		sums[i] = r.Summary
	}
	s.runs[name] = append(s.runs[name], sums)
}

// runSeeds runs the scenario once per seed, each seed's files in
// -out/seed-N, then prints and writes (NAME-seeds.csv and .md in -out) each
// report's policies over the seeds.
func runSeeds(o *options, seeds []int64) error {
	all := &seedRuns{}
	out := o.out
	defer func() { o.out, o.collect = out, nil }()
	o.collect = all
	for _, s := range seeds {
		o.seed = s
		if out != "" {
			o.out = filepath.Join(out, fmt.Sprintf("seed-%d", s))
		}
		fmt.Printf("=== seed %d\n\n", s)
		if err := run(o); err != nil {
			return fmt.Errorf("seed %d: %w", s, err)
		}
		if o.markdown && o.out != "" {
			if err := writeMarkdown(o.out); err != nil {
				return fmt.Errorf("seed %d: %w", s, err)
			}
		}
	}
	for _, name := range all.names {
		rows := seedTable(all.runs[name])
		printSeedTable(name, seeds, rows)
		if out != "" {
			if err := writeSeedTable(filepath.Join(out, name+"-seeds"), rows); err != nil {
				return err
			}
		}
	}
	return nil
}

// seedRow is one policy over the seeds: mean percentiles (a refused request
// is +Inf, so any refusal makes them +Inf), the seeds at which the policy
// is within nearBest of the best policy at that seed, the largest gap
// above the best, and the refusals over every seed.
type seedRow struct {
	policy                string
	mean95, mean99        float64
	near95, near99, seeds int
	worst95, worst99      float64
	meanGap95, meanGap99  float64 // mean's distance above the best policy's mean
	// meanE2E99 is the mean end-to-end p99 (arrival to last token, refusals
	// +Inf), which TTFT does not show: where a long answer decodes.
	meanE2E99, meanGapE2E99 float64
	rejected                int
}

// seedTable summarises runs (runs[i] is seed i's summaries, one per policy,
// in the same order at every seed).
func seedTable(runs [][]fleetsim.Summary) []seedRow {
	if len(runs) == 0 {
		return nil
	}
	rows := make([]seedRow, len(runs[0]))
	for i := range rows {
		rows[i].policy = runs[0][i].Policy
	}
	for _, sums := range runs {
		best95, best99 := math.Inf(1), math.Inf(1)
		for _, s := range sums {
			best95, best99 = math.Min(best95, float64(s.TTFTP95)), math.Min(best99, float64(s.TTFTP99))
		}
		for i, s := range sums {
			r := &rows[i]
			r.seeds++
			r.mean95 += float64(s.TTFTP95) / float64(len(runs))
			r.mean99 += float64(s.TTFTP99) / float64(len(runs))
			r.meanE2E99 += float64(s.E2EP99) / float64(len(runs))
			g95, g99 := gap(float64(s.TTFTP95), best95), gap(float64(s.TTFTP99), best99)
			r.worst95, r.worst99 = math.Max(r.worst95, g95), math.Max(r.worst99, g99)
			if g95 <= nearBest {
				r.near95++
			}
			if g99 <= nearBest {
				r.near99++
			}
			r.rejected += s.Rejected
		}
	}
	best95, best99, bestE2E := math.Inf(1), math.Inf(1), math.Inf(1)
	for _, r := range rows {
		best95, best99, bestE2E = math.Min(best95, r.mean95), math.Min(best99, r.mean99), math.Min(bestE2E, r.meanE2E99)
	}
	for i := range rows {
		rows[i].meanGap95, rows[i].meanGap99 = gap(rows[i].mean95, best95), gap(rows[i].mean99, best99)
		rows[i].meanGapE2E99 = gap(rows[i].meanE2E99, bestE2E)
	}
	return rows
}

// gap is how far v is above best, as a fraction (+Inf when v is and best is
// not; 0 when both are +Inf: every policy refused).
func gap(v, best float64) float64 {
	switch {
	case math.IsInf(v, 1) && math.IsInf(best, 1):
		return 0
	case math.IsInf(v, 1):
		return math.Inf(1)
	case best <= 0:
		return 0
	}
	return v/best - 1
}

var seedColumns = []string{"policy", "ttft_p95_mean_s", "p95_mean_gap", "p95_near_best", "p95_worst_gap",
	"ttft_p99_mean_s", "p99_mean_gap", "p99_near_best", "p99_worst_gap", "e2e_p99_mean_s", "e2e_p99_mean_gap", "rejected"}

func (r seedRow) cells(pct func(float64) string) []string {
	near := func(n int) string { return fmt.Sprintf("%d/%d", n, r.seeds) }
	return []string{r.policy, finite(r.mean95, 3), pct(r.meanGap95), near(r.near95), pct(r.worst95),
		finite(r.mean99, 3), pct(r.meanGap99), near(r.near99), pct(r.worst99), finite(r.meanE2E99, 2), pct(r.meanGapE2E99),
		strconv.Itoa(r.rejected)}
}

func pctCell(v float64) string {
	if math.IsInf(v, 1) {
		return "inf"
	}
	return fmt.Sprintf("%+.1f %%", 100*v)
}

func printSeedTable(name string, seeds []int64, rows []seedRow) {
	fmt.Printf("== %s over seeds %s\n", name, seedList(seeds))
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "policy\tp95 mean\tvs best\tnear best\tworst gap\tp99 mean\tvs best\tnear best\tworst gap\te2e p99 mean\tvs best\trejected\t")
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(r.cells(pctCell), "\t")+"\t")
	}
	_ = tw.Flush()
	fmt.Println("   TTFT in seconds, refusals counted as inf; mean over the seeds, vs best = above the best policy's mean;")
	fmt.Printf("   near best = seeds at which the policy is within %.0f %% of the best policy at that seed; worst gap = its\n", 100*nearBest)
	fmt.Println("   largest distance above that best. e2e p99 = arrival to last token (the rest is TTFT).")
	fmt.Println()
}

// seedList prints seeds compactly ("1-9", "1,3,5").
func seedList(seeds []int64) string {
	var parts []string
	for i := 0; i < len(seeds); {
		j := i
		for j+1 < len(seeds) && seeds[j+1] == seeds[j]+1 {
			j++
		}
		if j > i {
			parts = append(parts, fmt.Sprintf("%d-%d", seeds[i], seeds[j]))
		} else {
			parts = append(parts, strconv.FormatInt(seeds[i], 10))
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}

// writeSeedTable writes base.csv and base.md (the README's form).
func writeSeedTable(base string, rows []seedRow) error {
	if err := os.MkdirAll(filepath.Dir(base), 0o755); err != nil {
		return fmt.Errorf("seeds table: %w", err)
	}
	var c strings.Builder
	w := csv.NewWriter(&c)
	_ = w.Write(seedColumns)
	for _, r := range rows {
		_ = w.Write(r.cells(func(v float64) string { return finite(v, 4) }))
	}
	w.Flush()
	var m strings.Builder
	m.WriteString("| policy | p95 mean (s) | vs best mean | p95 near best | p95 worst gap | p99 mean (s) | vs best mean | p99 near best | p99 worst gap | e2e p99 mean (s) | vs best mean | rejected |\n")
	m.WriteString("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n")
	for _, r := range rows {
		fmt.Fprintf(&m, "| %s |\n", strings.Join(r.cells(pctCell), " | "))
	}
	for path, body := range map[string]string{base + ".csv": c.String(), base + ".md": m.String()} {
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			return fmt.Errorf("seeds table: %w", err)
		}
	}
	fmt.Printf("   wrote %s.csv, %s.md\n\n", base, base)
	return nil
}

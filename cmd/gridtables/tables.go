package main

import (
	"fmt"
	"io"
	"math"
	"strings"
)

func row(w io.Writer, cells ...string) { fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | ")) }

func header(w io.Writer, cells ...string) {
	row(w, cells...)
	fmt.Fprintln(w, strings.Repeat("| --- ", len(cells))+"|")
}

// pct is a signed percentage with one decimal ("+2.7 %").
func pct(f float64) string { return fmt.Sprintf("%+.1f %%", f*100) }

// roundPct is a signed whole percentage that keeps the sign of what it rounds ("-0 %").
func roundPct(f float64) string {
	sign := "+"
	if f < 0 {
		sign = "-"
	}
	return fmt.Sprintf("%s%.0f %%", sign, math.Abs(math.Round(f*100)))
}

func pair(a, b float64) string { return fmt.Sprintf("%.3f / %.3f", a, b) }

// wide is every policy's p95 / p99 on every workload at the first seed.
func wide(w io.Writer, g *grid) {
	cells := []string{"policy"}
	for _, wl := range workloads {
		cells = append(cells, wl.title)
	}
	header(w, cells...)
	s := g.seeds[0]
	for _, p := range g.policies {
		cells = []string{p}
		for i := range workloads {
			c := pair(p95(g.results[i][s][p]), p99(g.results[i][s][p]))
			if p == "kv" {
				c = "**" + c + "**"
			}
			cells = append(cells, c)
		}
		row(w, cells...)
	}
}

// versus is kv against the best other policy on each workload at the first seed.
func versus(w io.Writer, g *grid) {
	header(w, "workload", "kv p95 / p99", "best other p95 (policy)", "best other p99 (policy)", "kv vs best p95, p99",
		"kv prefix hit / best", "rejected, every policy (trace: engine 400s)")
	s := g.seeds[0]
	for i, wl := range workloads {
		by := g.results[i][s]
		kv := by["kv"]
		b95, v95 := g.best(by, p95, anyPolicy)
		b99, v99 := g.best(by, p99, anyPolicy)
		bestHit, rejected := 0.0, map[int]bool{}
		var rej []string
		for _, p := range g.policies {
			bestHit = max(bestHit, hit(by[p]))
			if n := by[p].Rejected; !rejected[n] {
				rejected[n] = true
				rej = append(rej, fmt.Sprint(n))
			}
		}
		row(w, wl.title, pair(p95(kv), p99(kv)), fmt.Sprintf("%.3f (%s)", v95, b95), fmt.Sprintf("%.3f (%s)", v99, b99),
			pct(gap(p95(kv), v95))+", "+pct(gap(p99(kv), v99)), fmt.Sprintf("%.3f / %.3f", hit(kv), bestHit), strings.Join(rej, ", "))
	}
}

// firstSeeds is kv's p95 / p99 at the first three seeds against the best other policy at each.
func firstSeeds(w io.Writer, g *grid) {
	seeds := g.seeds[:min(3, len(g.seeds))]
	cells := []string{"workload"}
	for _, s := range seeds {
		cells = append(cells, fmt.Sprintf("seed %d: kv p95 / p99 (vs best other)", s))
	}
	header(w, cells...)
	for i, wl := range workloads {
		cells = []string{wl.title}
		for _, s := range seeds {
			by := g.results[i][s]
			kv := by["kv"]
			_, v95 := g.best(by, p95, anyPolicy)
			_, v99 := g.best(by, p99, anyPolicy)
			cells = append(cells, fmt.Sprintf("%s (%s, %s)", pair(p95(kv), p99(kv)), roundPct(gap(p95(kv), v95)), roundPct(gap(p99(kv), v99))))
		}
		row(w, cells...)
	}
}

// means is kv's mean p95 and p99 over the seeds against the best mean, and
// at how many seeds kv is near the best (every policy / the non-kv ones).
func means(w io.Writer, g *grid) {
	n := len(g.seeds)
	header(w, "workload", "kv p95 mean (vs best mean)", "best other p95 mean", fmt.Sprintf("kv p95 near best, of %d (all / non-kv)", n),
		"kv p99 mean (vs best mean)", "best other p99 mean", "kv p99 near best (all / non-kv)", "refused by kv / most by another")
	for i, wl := range workloads {
		cells := []string{wl.short}
		for _, m := range []metric{p95, p99} {
			kv := g.mean(i, "kv", m)
			bp, bv := g.meanBest(i, m, anyPolicy)
			cells = append(cells, fmt.Sprintf("%.3f (%s)", kv, pct(gap(kv, bv))), fmt.Sprintf("%.3f (%s)", bv, bp),
				fmt.Sprintf("%d / %d", g.nearSeeds(i, m, anyPolicy), g.nearSeeds(i, m, notKVVariant)))
		}
		kvRefused, most := 0, 0
		for _, p := range g.policies {
			total := int(g.sum(i, p, refused))
			if p == "kv" {
				kvRefused = total
			} else {
				most = max(most, total)
			}
		}
		if strings.HasPrefix(wl.dir, "trace") {
			cells = append(cells, fmt.Sprintf("%d a seed (engine 400s, every policy)", kvRefused/n))
		} else {
			cells = append(cells, fmt.Sprintf("%d / %d", kvRefused, most))
		}
		row(w, cells...)
	}
}

// nearSeeds counts the seeds at which kv's m is near the best of the policies keep admits.
func (g *grid) nearSeeds(i int, m metric, keep func(string) bool) int {
	n := 0
	for _, s := range g.seeds {
		if g.nearAt(g.results[i][s], m, keep) {
			n++
		}
	}
	return n
}

// endToEnd is kv's mean end-to-end p50 / p99 against the best non-kv policy's means.
func endToEnd(w io.Writer, g *grid) {
	header(w, "workload", "kv end-to-end p50 / p99 mean", "best non-kv p50 mean", "best non-kv p99 mean", "kv p99 vs it")
	for i, wl := range workloads {
		b50, v50 := g.meanBest(i, e2e50, notKVVariant)
		b99, v99 := g.meanBest(i, e2e99, notKVVariant)
		kv99 := g.mean(i, "kv", e2e99)
		row(w, wl.title, fmt.Sprintf("%.2f / %.2f", g.mean(i, "kv", e2e50), kv99), fmt.Sprintf("%.2f (%s)", v50, b50),
			fmt.Sprintf("%.2f (%s)", v99, b99), pct(gap(kv99, v99)))
	}
}

// counts is how many cells (workload, seed, p95 or p99) kv is near best in,
// at the first three seeds and at all of them.
func counts(w io.Writer, g *grid) {
	spans := [][]int{g.seeds[:min(3, len(g.seeds))]}
	if len(g.seeds) > 3 {
		spans = append(spans, g.seeds)
	}
	for _, seeds := range spans {
		all, nonKV := g.nearCells(seeds)
		fmt.Fprintf(w, "seeds %v: %d cells, kv near the best of every policy in %d, of the non-kv policies in %d\n",
			seeds, 2*len(workloads)*len(seeds), all, nonKV)
	}
}

// misses lists every cell where kv is not near the best of every policy.
func misses(w io.Writer, g *grid) {
	for i, wl := range workloads {
		for _, s := range g.seeds {
			by := g.results[i][s]
			for _, m := range []struct {
				name string
				f    metric
			}{{"p95", p95}, {"p99", p99}} {
				kv := m.f(by["kv"])
				bp, bv := g.best(by, m.f, anyPolicy)
				if near(gap(kv, bv)) {
					continue
				}
				np, nv := g.best(by, m.f, notKVVariant)
				fmt.Fprintf(w, "%s seed %d %s: kv %.3f, %s against %s's %.3f; %s against the best non-kv (%s)\n",
					wl.short, s, m.name, kv, pct(gap(kv, bv)), bp, bv, pct(gap(kv, nv)), np)
			}
		}
	}
}

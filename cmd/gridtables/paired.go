package main

import (
	"fmt"
	"io"
	"math"
)

// The seed-by-seed test (near) asks whether kv is within 2 % of the best
// policy at each seed; between policies whose figures move by several per
// cent from seed to seed it is often a coin flip. The paired view asks what
// the seeds say together: the same seed gives every policy the same arrivals
// and prompts, so kv's ratio to another policy at each seed is one paired
// observation, and their mean (on a log scale) with a 95 % t-interval says
// how far apart the two are and how sure the grid is of it.

// interval is kv's figure against another policy's over the seeds: the mean
// ratio minus one and its 95 % interval, as fractions (+0.02 is 2 % above).
type interval struct {
	mean, lo, hi float64
	refusals     bool // a refusal on one side made a seed's ratio infinite
}

// tQuantile975 is the two-sided 95 % quantile of Student's t for df degrees
// of freedom (1 to 30; the normal's 1.96 beyond).
func tQuantile975(df int) float64 {
	table := []float64{12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
		2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
		2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042}
	if df >= 1 && df <= len(table) {
		return table[df-1]
	}
	return 1.96
}

// pairedRatio is kv's m against policy p's on workload i over the grid's
// seeds. A refusal's +Inf makes the ratio infinite at that seed and the
// interval that infinity (or undetermined, -Inf to +Inf, when both sides
// refused at different seeds); one seed gives no interval.
func (g *grid) pairedRatio(i int, p string, m metric) interval {
	logs := make([]float64, 0, len(g.seeds))
	sum := 0.0
	for _, s := range g.seeds {
		l := math.Log(m(g.results[i][s]["kv"])) - math.Log(m(g.results[i][s][p]))
		if math.IsNaN(l) { // +Inf against +Inf: both refused, level
			l = 0
		}
		logs = append(logs, l)
		sum += l
	}
	n := float64(len(logs))
	mean := sum / n
	if math.IsNaN(mean) {
		return interval{math.NaN(), math.Inf(-1), math.Inf(1), true}
	}
	if math.IsInf(mean, 0) {
		r := math.Exp(mean) - 1
		return interval{r, r, r, true}
	}
	if len(logs) < 2 {
		return interval{math.Exp(mean) - 1, math.Inf(-1), math.Inf(1), false}
	}
	ss := 0.0
	for _, l := range logs {
		ss += (l - mean) * (l - mean)
	}
	half := tQuantile975(len(logs)-1) * math.Sqrt(ss/(n-1)/n)
	return interval{math.Exp(mean) - 1, math.Exp(mean-half) - 1, math.Exp(mean+half) - 1, false}
}

// behind is the policy among those keep admits that kv is likeliest to be
// behind on workload i: the one whose interval reaches highest.
func (g *grid) behind(i int, m metric, keep func(string) bool) (string, interval) {
	name, worst := "", interval{}
	for _, p := range g.policies {
		if p == "kv" || !keep(p) {
			continue
		}
		if iv := g.pairedRatio(i, p, m); name == "" || iv.hi > worst.hi {
			name, worst = p, iv // an undetermined interval reaches +Inf, so it wins too
		}
	}
	return name, worst
}

func (iv interval) String() string {
	switch {
	case math.IsNaN(iv.mean):
		return "undetermined (refusals on both sides)"
	case math.IsInf(iv.lo, -1) && math.IsInf(iv.hi, 1):
		return pct(iv.mean) + " (no interval from one seed)"
	case iv.refusals:
		return pct(iv.mean) + " (refusals)"
	}
	return fmt.Sprintf("%s (%s to %s)", pct(iv.mean), pct(iv.lo), pct(iv.hi))
}

// paired is, for each workload and percentile, kv's mean ratio to the policy
// it is likeliest to be behind, with its 95 % interval over the seeds; then
// how many cells the grid shows kv behind some policy (the interval above
// zero) and how many it shows kv within 2 % of every policy (the interval's
// top at or under 2 %), counting every policy and the non-kv ones.
func paired(w io.Writer, g *grid) {
	header(w, "workload", "p95: kv against (every policy)", "p95: against the non-kv policies",
		"p99: kv against (every policy)", "p99: against the non-kv policies")
	var behindAll, behindNonKV, withinAll, withinNonKV, cells int
	for i, wl := range workloads {
		cellsRow := []string{wl.short}
		for _, m := range []metric{p95, p99} {
			cells++
			pa, all := g.behind(i, m, anyPolicy)
			pn, nonKV := g.behind(i, m, notKVVariant)
			cellsRow = append(cellsRow, pa+": "+all.String(), pn+": "+nonKV.String())
			behindAll += b2i(all.lo > 0)
			behindNonKV += b2i(nonKV.lo > 0)
			withinAll += b2i(near(all.hi))
			withinNonKV += b2i(near(nonKV.hi))
		}
		row(w, cellsRow...)
	}
	fmt.Fprintf(w, "\nseeds %v, %d cells (p95 and p99): kv is behind some policy, its 95 %% interval above zero, in %d (a non-kv one: %d); "+
		"within 2 %% of every policy, the interval's top at or under +2 %%, in %d (of every non-kv one: %d)\n",
		g.seeds, cells, behindAll, behindNonKV, withinAll, withinNonKV)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

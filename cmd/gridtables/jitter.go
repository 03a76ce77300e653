package main

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// A queueing system's tail answers to timing: which request lands in which
// engine step. hack/jitter-grid.sh replays the grid with every arrival moved
// later by up to a millisecond (routebench -jitter), the prompts unchanged,
// once per jitter seed into DIR/jN. A policy whose percentile moves by more
// than 2 % between replays of one seed cannot be judged within 2 % of
// another at that seed by one run; the mean over the replays can be.

// replays are the jittered grids, one per jitter seed.
type replays struct {
	names []string // "j1", "j2", ... in seed order
	grids []*grid
}

// loadReplays reads dir's jN folders: at least two, each a grid over the
// same seeds and policies.
func loadReplays(dir string) (*replays, error) {
	seeds, err := numberedDirs(dir, "jitter", "j")
	if err != nil {
		return nil, err
	}
	if len(seeds) < 2 {
		return nil, errors.New(dir + ": want two or more jN folders (run hack/jitter-grid.sh)")
	}
	r := &replays{}
	for _, s := range seeds {
		name := "j" + strconv.Itoa(s)
		g, err := load(filepath.Join(dir, name))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if len(r.grids) > 0 {
			first := r.grids[0]
			if !slices.Equal(g.seeds, first.seeds) || !slices.Equal(g.policies, first.policies) {
				return nil, fmt.Errorf("%s has seeds %v and policies %v, %s %v and %v: replay the same grid",
					name, g.seeds, g.policies, r.names[0], first.seeds, first.policies)
			}
		}
		r.names, r.grids = append(r.names, name), append(r.grids, g)
	}
	return r, nil
}

// mean is policy p's m on workload i at seed s, averaged over the replays
// (a refusal's +Inf stays +Inf).
func (r *replays) mean(i, s int, p string, m metric) float64 {
	sum := 0.0
	for _, g := range r.grids {
		sum += m(g.results[i][s][p])
	}
	return sum / float64(len(r.grids))
}

// spread is how far policy p's m on workload i at seed s moves over the
// replays: the largest over the smallest, less one.
func (r *replays) spread(i, s int, p string, m metric) float64 {
	lo, hi := m(r.grids[0].results[i][s][p]), 0.0
	for _, g := range r.grids {
		v := m(g.results[i][s][p])
		lo, hi = min(lo, v), max(hi, v)
	}
	return gap(hi, lo)
}

// best is the policy other than kv among those keep admits with the lowest
// mean over the replays on workload i at seed s, and that mean.
func (r *replays) best(i, s int, m metric, keep func(string) bool) (string, float64) {
	return r.grids[0].lowest(keep, func(p string) float64 { return r.mean(i, s, p, m) })
}

// jitterTable prints, per workload and seed, kv's mean over the replays
// against the best other policy's (every policy, and the non-kv ones), and
// how far kv's own figure moved over them; then the test on the
// means, on each replay alone, and every cell the means miss.
func jitterTable(w io.Writer, r *replays) {
	g := r.grids[0]
	header(w, "workload", "seed", "p95: kv (moved over the replays)", "against the best other", "against the best non-kv",
		"p99: kv (moved)", "against the best other", "against the best non-kv")
	var cells, all, nonKV, kvNoisy int
	var missed []string
	for i, wl := range workloads {
		for _, s := range g.seeds {
			cellsRow := []string{wl.short, strconv.Itoa(s)}
			for _, m := range []struct {
				name string
				f    metric
			}{{"p95", p95}, {"p99", p99}} {
				kv := r.mean(i, s, "kv", m.f)
				pa, va := r.best(i, s, m.f, anyPolicy)
				pn, vn := r.best(i, s, m.f, notKVVariant)
				moved := r.spread(i, s, "kv", m.f)
				cellsRow = append(cellsRow, fmt.Sprintf("%.3f (%s)", kv, roundPct(moved)),
					fmt.Sprintf("%s (%s)", pct(gap(kv, va)), pa), fmt.Sprintf("%s (%s)", pct(gap(kv, vn)), pn))
				cells++
				all += b2i(near(gap(kv, va)))
				nonKV += b2i(near(gap(kv, vn)))
				kvNoisy += b2i(!near(moved))
				if !near(gap(kv, va)) {
					missed = append(missed, fmt.Sprintf("%s seed %d %s: kv %.3f, %s against %s's %.3f; %s against the best non-kv (%s)",
						wl.short, s, m.name, kv, pct(gap(kv, va)), pa, va, pct(gap(kv, vn)), pn))
				}
			}
			row(w, cellsRow...)
		}
	}
	fmt.Fprintf(w, "\n%d replays (%s), seeds %v, %d cells: on the means over the replays kv is within 2 %% of the best of every policy in %d, of the non-kv policies in %d; "+
		"kv's own figure moved by more than 2 %% over the replays in %d\n", len(r.grids), strings.Join(r.names, ", "), g.seeds, cells, all, nonKV, kvNoisy)
	fmt.Fprintf(w, "cells where a policy's own figure moved by more than 2 %% over the replays: %s\n", r.noisy())
	for k, rg := range r.grids {
		a, n := rg.nearCells(rg.seeds)
		fmt.Fprintf(w, "%s alone: within 2 %% of every policy in %d, of the non-kv policies in %d\n", r.names[k], a, n)
	}
	for _, m := range missed {
		fmt.Fprintln(w, m)
	}
}

// noisy lists, for every policy, the cells (workload, seed, p95 or p99)
// where its figure moved by more than 2 % over the replays.
func (r *replays) noisy() string {
	g := r.grids[0]
	var out []string
	for _, p := range g.policies {
		n := 0
		for i := range workloads {
			for _, s := range g.seeds {
				n += b2i(!near(r.spread(i, s, p, p95))) + b2i(!near(r.spread(i, s, p, p99)))
			}
		}
		out = append(out, fmt.Sprintf("%s %d", p, n))
	}
	return strings.Join(out, ", ")
}

// nearCells counts the cells (workload, seed among seeds, p95 or p99) where
// kv is near the best of every policy and of the non-kv ones.
func (g *grid) nearCells(seeds []int) (all, nonKV int) {
	for i := range workloads {
		for _, s := range seeds {
			by := g.results[i][s]
			for _, m := range []metric{p95, p99} {
				all += b2i(g.nearAt(by, m, anyPolicy))
				nonKV += b2i(g.nearAt(by, m, notKVVariant))
			}
		}
	}
	return all, nonKV
}

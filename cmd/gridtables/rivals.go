package main

import (
	"fmt"
	"io"
	"strings"
)

// The seed-by-seed test asks kv to be within 2 % of the lowest of ten other
// policies at every seed. Where several policies are level on average, the
// lowest of their figures at a seed is usually below each one's own, so the
// test fails a level policy at many seeds by chance. The rivals table
// applies the same test to every policy in turn (each against all the
// others), which says whether any policy could pass it where kv does not.

// passes is how many of the grid's seeds policy p is within 2 % of the best
// of the other policies keep admits on workload i's m.
func (g *grid) passes(i int, p string, m metric, keep func(string) bool) int {
	n := 0
	for _, s := range g.seeds {
		by := g.results[i][s]
		best, found := 0.0, false
		for _, o := range g.policies {
			if o == p || !keep(o) {
				continue
			}
			if v := m(by[o]); !found || v < best {
				best, found = v, true
			}
		}
		if found && near(gap(m(by[p]), best)) {
			n++
		}
	}
	return n
}

// mostPasses is the policy other than kv, among those keep admits, that
// passes the test at the most seeds (judged against every other policy, kv
// included), and that count; ties go to the earlier in policyOrder.
func (g *grid) mostPasses(i int, m metric, keep func(string) bool) (string, int) {
	name, most := "", -1
	for _, p := range g.policies {
		if p == "kv" || !keep(p) {
			continue
		}
		if n := g.passes(i, p, m, anyPolicy); n > most {
			name, most = p, n
		}
	}
	return name, most
}

// rivals is, for each workload and percentile, at how many seeds kv passes
// the test against every policy and against the non-kv ones, and
// the most seeds another policy passes it at, judged the same way against
// every policy but itself (any other policy, and the non-kv ones); then the
// cells where another policy passes more often than kv.
func rivals(w io.Writer, g *grid) {
	header(w, "workload", "p95: kv near best (all / non-kv)", "p95: most by another policy; by a non-kv one",
		"p99: kv near best (all / non-kv)", "p99: most by another policy; by a non-kv one")
	var ahead []string
	nonKVAhead := 0
	for i, wl := range workloads {
		cells := []string{wl.short}
		for _, m := range []struct {
			name string
			f    metric
		}{{"p95", p95}, {"p99", p99}} {
			all, nonKV := g.passes(i, "kv", m.f, anyPolicy), g.passes(i, "kv", m.f, notKVVariant)
			other, most := g.mostPasses(i, m.f, anyPolicy)
			rival, rivalMost := g.mostPasses(i, m.f, notKVVariant)
			cells = append(cells, fmt.Sprintf("%d / %d", all, nonKV), passCount(other, most)+"; "+passCount(rival, rivalMost))
			if most > all {
				ahead = append(ahead, fmt.Sprintf("%s %s: %s %d, kv %d", wl.short, m.name, other, most, all))
			}
			nonKVAhead += b2i(rivalMost > all)
		}
		row(w, cells...)
	}
	fmt.Fprintf(w, "\nseeds %v (%d): a non-kv policy passes the test at more seeds than kv in %s; ", g.seeds, len(g.seeds), cellCount(nonKVAhead))
	if len(ahead) == 0 {
		fmt.Fprintln(w, "no policy does in any cell")
		return
	}
	fmt.Fprintf(w, "any other policy in %s: %s\n", cellCount(len(ahead)), strings.Join(ahead, "; "))
}

// passCount is "n (policy)", or "none" where the grid has no such policy.
func passCount(policy string, n int) string {
	if policy == "" {
		return "none"
	}
	return fmt.Sprintf("%d (%s)", n, policy)
}

// cellCount is n cells, in words that agree with n.
func cellCount(n int) string {
	if n == 1 {
		return "1 cell"
	}
	return fmt.Sprintf("%d cells", n)
}

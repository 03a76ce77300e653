package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/kvpick/kvpick/pkg/fleetsim"
)

// workload is one column of the grid: the folder hack/grid.sh writes it to,
// the report's file name in each seed folder, and its titles in the README.
type workload struct {
	dir, file    string
	title, short string
}

// workloads are hack/grid.sh's, in the README's column order.
var workloads = []workload{
	{"brief", "brief", "brief (2 replicas, 4.5 req/s)", "brief"},
	{"brief", "brief-import", "brief-import (+30 x 12k docs in 5 s)", "brief-import"},
	{"sp15", "shared-prefix", "shared-prefix 150 x 6k+1.2k, 15 req/s", "shared-prefix 15 req/s"},
	{"sp25", "shared-prefix", "shared-prefix, 25 req/s (4,000 req)", "shared-prefix 25 req/s"},
	{"multiturn", "multiturn", "multiturn, sessions", "multiturn, sessions"},
	{"burst", "burst", "burst (80 x 16k docs mid-run)", "burst"},
	{"trace", "trace", "Mooncake trace, x1", "Mooncake trace x1"},
	{"trace-x1.5", "trace", "Mooncake trace, x1.5 rate", "Mooncake trace x1.5"},
	{"mixed", "shared-prefix", "mixed fleet large+small, shared-prefix 10 req/s", "mixed fleet, 10 req/s"},
}

// policyOrder is the README's row order; policies a grid lacks are skipped.
var policyOrder = []string{"kv", "kv-observed", "kv+queue", "round-robin", "random", "least-loaded", "power-of-two",
	"least-queue", "gaie-default", "sglang-cache-aware", "sglang-cache-aware-v04"}

// kvVariants are kv mode's own policies; the rest are the other routers.
var kvVariants = map[string]bool{"kv": true, "kv-observed": true, "kv+queue": true}

// nearBest is the margin; near adds a hair for float rounding, so
// that exactly 2 % (1.02 against 1.00) counts as within it.
const nearBest = 0.02

func near(g float64) bool { return g <= nearBest+1e-12 }

// grid holds every report: results[workload index][seed][policy].
type grid struct {
	results  []map[int]map[string]fleetsim.Summary
	seeds    []int
	policies []string // in policyOrder, those every report has
}

type report struct {
	Results []fleetsim.Summary `json:"results"`
}

// load reads dir's reports. Every workload needs the same seeds and every
// report the kv policy; a missing or unreadable report is an error naming it.
func load(dir string) (*grid, error) {
	g := &grid{results: make([]map[int]map[string]fleetsim.Summary, len(workloads))}
	for i, w := range workloads {
		seeds, err := seedDirs(filepath.Join(dir, w.dir))
		if err != nil {
			return nil, err
		}
		if i == 0 {
			g.seeds = seeds
		} else if !slices.Equal(seeds, g.seeds) {
			return nil, fmt.Errorf("%s has seeds %v, %s has %v: run the grid over the same seeds", w.dir, seeds, workloads[0].dir, g.seeds)
		}
		g.results[i] = map[int]map[string]fleetsim.Summary{}
		for _, s := range seeds {
			path := filepath.Join(dir, w.dir, "seed-"+strconv.Itoa(s), w.file+".json")
			by, err := readReport(path)
			if err != nil {
				return nil, err
			}
			g.results[i][s] = by
		}
	}
	for _, p := range policyOrder {
		if g.everywhere(p) {
			g.policies = append(g.policies, p)
		}
	}
	if !slices.Contains(g.policies, "kv") || len(g.policies) < 2 {
		return nil, fmt.Errorf("%s: every report needs kv and another policy, found %v in all", dir, g.policies)
	}
	return g, nil
}

// seedDirs lists the seed-N folders of a workload, in order.
func seedDirs(dir string) ([]int, error) {
	seeds, err := numberedDirs(dir, "workload", "seed-")
	if err == nil && len(seeds) == 0 {
		err = fmt.Errorf("%s: no seed-N folders (run make grid)", dir)
	}
	return seeds, err
}

// numberedDirs lists the numbers N of dir's folders named prefix+N, in
// order; what names dir in errors.
func numberedDirs(dir, what, prefix string) ([]int, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("%s folder: %w", what, err)
	}
	var ns []int
	for _, e := range ents {
		if n, ok := strings.CutPrefix(e.Name(), prefix); ok && e.IsDir() {
			s, err := strconv.Atoi(n)
			if err != nil {
				return nil, fmt.Errorf("%s: %q is not %sN", dir, e.Name(), prefix)
			}
			ns = append(ns, s)
		}
	}
	slices.Sort(ns)
	return ns, nil
}

func readReport(path string) (map[string]fleetsim.Summary, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("report %s is missing", path)
	} else if err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	var r report
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("report %s: %w", path, err)
	}
	by := map[string]fleetsim.Summary{}
	for _, s := range r.Results {
		by[s.Policy] = s
	}
	return by, nil
}

func (g *grid) everywhere(policy string) bool {
	for _, bySeed := range g.results {
		for _, by := range bySeed {
			if _, ok := by[policy]; !ok {
				return false
			}
		}
	}
	return true
}

// metric reads one figure of a summary.
type metric func(fleetsim.Summary) float64

func p95(s fleetsim.Summary) float64     { return float64(s.TTFTP95) }
func p99(s fleetsim.Summary) float64     { return float64(s.TTFTP99) }
func e2e50(s fleetsim.Summary) float64   { return float64(s.E2EP50) }
func e2e99(s fleetsim.Summary) float64   { return float64(s.E2EP99) }
func hit(s fleetsim.Summary) float64     { return s.PrefixHit }
func refused(s fleetsim.Summary) float64 { return float64(s.Rejected) }

// lowest is the policy other than kv, among those keep admits, with the
// lowest value, and that value.
func (g *grid) lowest(keep func(string) bool, value func(p string) float64) (string, float64) {
	name, v := "", 0.0
	for _, p := range g.policies {
		if p == "kv" || !keep(p) {
			continue
		}
		if x := value(p); name == "" || x < v {
			name, v = p, x
		}
	}
	return name, v
}

// best is lowest on one report's m.
func (g *grid) best(by map[string]fleetsim.Summary, m metric, keep func(string) bool) (string, float64) {
	return g.lowest(keep, func(p string) float64 { return m(by[p]) })
}

// meanBest is lowest on the means over the seeds of workload i.
func (g *grid) meanBest(i int, m metric, keep func(string) bool) (string, float64) {
	return g.lowest(keep, func(p string) float64 { return g.mean(i, p, m) })
}

// nearAt reports whether kv's m in one report is near the best of the policies keep admits.
func (g *grid) nearAt(by map[string]fleetsim.Summary, m metric, keep func(string) bool) bool {
	_, v := g.best(by, m, keep)
	return near(gap(m(by["kv"]), v))
}

// sum is policy p's m summed over the seeds of workload i.
func (g *grid) sum(i int, p string, m metric) float64 {
	total := 0.0
	for _, s := range g.seeds {
		total += m(g.results[i][s][p])
	}
	return total
}

// mean is policy p's m averaged over the seeds of workload i.
func (g *grid) mean(i int, p string, m metric) float64 { return g.sum(i, p, m) / float64(len(g.seeds)) }

func anyPolicy(string) bool      { return true }
func notKVVariant(p string) bool { return !kvVariants[p] }

// gap is how far a is above b, as a fraction (+Inf against +Inf is 0).
func gap(a, b float64) float64 {
	if a == b {
		return 0
	}
	return a/b - 1
}

// Command gridtables prints the README's issue-11 grid tables from the
// reports `make grid` (hack/grid.sh) leaves in a folder: NAME/seed-N/SCENARIO.json
// for each workload NAME the grid runs. Usage:
//
//	gridtables [-dir out/grid] [-table all|wide|versus|seeds|means|e2e|counts|misses|paired|rivals]
//	gridtables -dir out/jitter -table jitter
//
// "Near best" is the test: kv's TTFT percentile at most 2 % above the
// lowest of the other policies at that seed (refusals count as +Inf, as
// routebench reports them).
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
)

func main() {
	dir := flag.String("dir", "out/grid", "the grid's output folder (hack/grid.sh's OUT)")
	table := flag.String("table", "all", "which table: all, wide, versus, seeds, means, e2e, counts, misses, paired, rivals; or jitter, for hack/jitter-grid.sh's folder of replays")
	flag.Parse()
	if err := run(os.Stdout, *dir, *table); err != nil {
		fmt.Fprintln(os.Stderr, "gridtables:", err)
		os.Exit(1)
	}
}

func run(w io.Writer, dir, table string) error {
	if table == "jitter" {
		r, err := loadReplays(dir)
		if err != nil {
			return err
		}
		jitterTable(w, r)
		return nil
	}
	g, err := load(dir)
	if err != nil {
		return err
	}
	tables := map[string]func(io.Writer, *grid){
		"wide": wide, "versus": versus, "seeds": firstSeeds, "means": means, "e2e": endToEnd,
		"counts": counts, "misses": misses, "paired": paired, "rivals": rivals,
	}
	if table == "all" {
		for _, name := range []string{"wide", "versus", "seeds", "means", "e2e", "counts", "misses", "paired", "rivals"} {
			fmt.Fprintf(w, "<!-- %s -->\n", name)
			tables[name](w, g)
			fmt.Fprintln(w)
		}
		return nil
	}
	f, ok := tables[table]
	if !ok {
		return fmt.Errorf("unknown -table %q (want all, wide, versus, seeds, means, e2e, counts, misses, paired, rivals or jitter)", table)
	}
	f(w, g)
	return nil
}

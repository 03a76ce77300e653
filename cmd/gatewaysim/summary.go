package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"
)

// kinds of request in the brief workload, in report order, with their names in prose.
var kinds = []struct{ key, name string }{{"shared", "shared-prefix"}, {"doc", "documents"}, {"all", "all"}}

// ttftStats is one kind's time to first token, in milliseconds.
type ttftStats struct {
	N   int     `json:"n"`
	P50 float64 `json:"p50Ms"`
	P95 float64 `json:"p95Ms"`
}

// summary is a run's outcome, written by -summary-out and read by -baseline.
type summary struct {
	Label  string               `json:"label"`
	TTFT   map[string]ttftStats `json:"ttft"`
	Failed int                  `json:"failed"`
}

// summarize computes per-kind TTFT percentiles of the successful requests.
func summarize(label string, rs []outcome) summary {
	s := summary{Label: label, TTFT: map[string]ttftStats{}}
	by := map[string][]time.Duration{}
	for _, r := range rs {
		if r.err != nil || r.status != 200 {
			s.Failed++
			continue
		}
		by[r.kind] = append(by[r.kind], r.ttft)
		by["all"] = append(by["all"], r.ttft)
	}
	for k, d := range by {
		sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
		s.TTFT[k] = ttftStats{N: len(d), P50: ms(d[(len(d)-1)/2]), P95: ms(d[(len(d)*95-1)/100])}
	}
	return s
}

// report prints where requests went and their TTFT, writes the summary,
// compares with a baseline, and fails when any request failed.
func report(o options, rs []outcome, names map[string]string, w io.Writer) error {
	printPlacement(w, rs, names)
	s := summarize(o.label, rs)
	printTTFT(w, s)
	if o.summaryOut != "" {
		b, _ := json.MarshalIndent(s, "", "  ")
		if err := os.WriteFile(o.summaryOut, b, 0o644); err != nil {
			return fmt.Errorf("--summary-out: %w", err)
		}
	}
	if o.baseline != "" {
		base, err := readSummary(o.baseline)
		if err != nil {
			return err
		}
		fmt.Fprintln(w, verdict(base, s))
	}
	if s.Failed > 0 {
		return fmt.Errorf("%d of %d requests failed%s", s.Failed, len(rs), firstFailure(rs))
	}
	return nil
}

func printPlacement(w io.Writer, rs []outcome, names map[string]string) {
	byEP := map[string]map[string]int{}
	for _, r := range rs {
		if r.err == nil && r.status == 200 {
			ep := display(r.endpoint, names)
			if byEP[ep] == nil {
				byEP[ep] = map[string]int{}
			}
			byEP[ep][r.kind]++
		}
	}
	keys := make([]string, 0, len(byEP))
	for k := range byEP {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	fmt.Fprintln(w, "\nendpoint                shared-prefix  documents")
	for _, k := range keys {
		fmt.Fprintf(w, "%-22s  %13d  %9d\n", k, byEP[k]["shared"], byEP[k]["doc"])
	}
}

func printTTFT(w io.Writer, s summary) {
	fmt.Fprintln(w, "\nrequests        count  ttft p50   ttft p95")
	for _, k := range kinds {
		if st, ok := s.TTFT[k.key]; ok {
			fmt.Fprintf(w, "%-14s  %5d  %6.0f ms  %6.0f ms\n", k.name, st.N, st.P50, st.P95)
		}
	}
}

func readSummary(path string) (summary, error) {
	var s summary
	b, err := os.ReadFile(path)
	if err == nil {
		err = json.Unmarshal(b, &s)
	}
	if err != nil {
		return s, fmt.Errorf("--baseline %s: %w", path, err)
	}
	return s, nil
}

// verdict is one line: how each kind's TTFT changed from the baseline run to this one.
func verdict(base, cur summary) string {
	var parts []string
	for _, k := range kinds[:2] {
		b, okB := base.TTFT[k.key]
		c, okC := cur.TTFT[k.key]
		if !okB || !okC {
			continue
		}
		parts = append(parts, fmt.Sprintf("%s p50 %.0f ms -> %.0f ms (%s), p95 %.0f ms -> %.0f ms (%s)",
			k.name, b.P50, c.P50, change(b.P50, c.P50), b.P95, c.P95, change(b.P95, c.P95)))
	}
	if len(parts) == 0 {
		return "verdict: no request kind succeeded in both runs"
	}
	return fmt.Sprintf("verdict: %s vs %s: %s", orName(cur.Label, "this run"), orName(base.Label, "baseline"),
		strings.Join(parts, "; "))
}

func change(from, to float64) string {
	if from <= 0 {
		return "n/a"
	}
	return fmt.Sprintf("%+.0f%%", (to-from)/from*100)
}

func orName(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// errorBody is a failed response's body on one line, cut to a readable length.
func errorBody(b []byte) string {
	s := strings.Join(strings.Fields(string(b)), " ")
	if s == "" {
		return "(empty body)"
	}
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return s
}

// firstFailure describes the first failed request, so a quiet run still says why.
func firstFailure(rs []outcome) string {
	for _, r := range rs {
		switch {
		case r.err != nil:
			return fmt.Sprintf("; first: #%d: %v", r.n, r.err)
		case r.status != 200:
			return fmt.Sprintf("; first: #%d status %d: %s", r.n, r.status, errorBody(r.body))
		}
	}
	return ""
}

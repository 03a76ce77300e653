package main

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/kvpick/kvpick/pkg/fleetsim"
	"github.com/kvpick/kvpick/pkg/workload"
)

// report is one scenario run across policies.
type report struct {
	name    string
	title   string
	rate    float64
	cal     *calibration
	stats   workload.Stats
	fleet   fleetsim.Config
	results []*fleetsim.Result
	wall    time.Duration
}

// columns are the CSV header. TTFT/E2E percentiles count refused requests
// as +Inf; served_* count served requests only.
var columns = []string{"policy", "ttft_p50_s", "ttft_p95_s", "ttft_p99_s", "served_ttft_p95_s", "served_ttft_p99_s",
	"e2e_p50_s", "e2e_p99_s", "req_per_s", "out_tok_per_s", "prefix_hit", "max_queue", "max_engine_waiting", "rejected",
	"over_ttft_target", "preemptions"}

// rejectedCol is the index of "rejected" in columns and row.
const rejectedCol = 13

// finite formats v with prec decimals, or "inf" for +Inf (a percentile
// with a refusal in it).
func finite(v float64, prec int) string {
	if math.IsInf(v, 1) {
		return "inf"
	}
	return strconv.FormatFloat(v, 'f', prec, 64)
}

func row(s *fleetsim.Summary) []string {
	f := func(v float64, prec int) string { return strconv.FormatFloat(v, 'f', prec, 64) }
	sec := func(v fleetsim.Seconds, prec int) string { return finite(float64(v), prec) }
	return []string{s.Policy, sec(s.TTFTP50, 3), sec(s.TTFTP95, 3), sec(s.TTFTP99, 3), f(s.ServedTTFTP95, 3),
		f(s.ServedTTFTP99, 3), sec(s.E2EP50, 2), sec(s.E2EP99, 2), f(s.RequestsPerSec, 2), f(s.OutputTokensPerSec, 0),
		f(s.PrefixHit, 3), strconv.Itoa(s.MaxQueue), strconv.Itoa(s.MaxEngineWaiting), rejected(s), f(s.OverTarget, 3),
		strconv.Itoa(s.Preemptions)}
}

// rejected is the count with its breakdown by error type, e.g. "12 (queue_timeout:12)".
func rejected(s *fleetsim.Summary) string {
	if s.Rejected == 0 {
		return "0"
	}
	keys := make([]string, 0, len(s.RejectedBy))
	for k := range s.RejectedBy {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s:%d", k, s.RejectedBy[k])
	}
	return fmt.Sprintf("%d (%s)", s.Rejected, strings.Join(parts, ","))
}

func (r *report) print(o *options) {
	title := r.title
	if title == "" {
		title = r.name
	}
	fmt.Printf("== %s%s\n", title, replicasNote(o))
	fmt.Printf("   %d requests over %.0fs, mean input %.0f, mean output %.0f tokens, prefix-hit upper bound %.3f; %d endpoints; TTFT target %v; simulated in %v\n",
		r.stats.Requests, r.stats.Span.Seconds(), r.stats.MeanInput, r.stats.MeanOutput, r.stats.PrefixUpperBound,
		len(r.fleet.Engines), o.ttftTarget, r.wall.Round(time.Millisecond))
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, strings.Join([]string{"policy", "TTFT p50", "p95", "p99", "served p95", "served p99", "E2E p50", "p99", "req/s", "out tok/s",
		"prefix hit", "max queue", "max eng wait", "rejected", ">target", "preempt"}, "\t")+"\t")
	for _, res := range r.results {
		fmt.Fprintln(tw, strings.Join(row(&res.Summary), "\t")+"\t")
	}
	_ = tw.Flush()
	for _, res := range r.results {
		if len(res.Violations) > 0 {
			fmt.Printf("   WARNING %s: simulator invariants broken: %v\n", res.Policy, res.Violations)
		}
	}
	fmt.Println("   TTFT/E2E in seconds, including admission queueing; a refused request counts as inf; served p95/p99 count")
	fmt.Println("   served requests only; prefix hit = engine-cached prompt tokens / prompt tokens of served requests;")
	fmt.Println("   max queue = picker admission queue; >target = share of requests over the TTFT target (rejections count as over).")
	fmt.Println()
}

// write saves the CSV, JSON and plots and prints their paths.
func (r *report) write(o *options) error {
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return fmt.Errorf("output directory: %w", err)
	}
	base := filepath.Join(o.out, r.name)
	paths := []string{base + ".csv", base + ".json"}
	if err := r.writeCSV(paths[0]); err != nil {
		return err
	}
	if err := r.writeJSON(paths[1], o); err != nil {
		return err
	}
	if o.records {
		paths = append(paths, base+"-records.csv")
		if err := r.writeRecords(base + "-records.csv"); err != nil {
			return err
		}
	}
	if !o.noPlots {
		plots, err := writePlots(base, o.plotFormat, r)
		if err != nil {
			return err
		}
		paths = append(paths, plots...)
	}
	fmt.Printf("   wrote %s\n\n", strings.Join(paths, ", "))
	return nil
}

func (r *report) writeCSV(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("csv: %w", err)
	}
	w := csv.NewWriter(f)
	_ = w.Write(columns)
	for _, res := range r.results {
		cells := row(&res.Summary)
		cells[rejectedCol] = strconv.Itoa(res.Summary.Rejected)
		_ = w.Write(cells)
	}
	w.Flush()
	if err := firstErr(w.Error(), f.Close()); err != nil {
		return fmt.Errorf("csv %s: %w", path, err)
	}
	return nil
}

// jsonReport is the JSON file's layout.
type jsonReport struct {
	Scenario    string             `json:"scenario"`
	Title       string             `json:"title"`
	Rate        float64            `json:"rate,omitempty"`
	Calibration *calibration       `json:"calibration,omitempty"`
	Workload    jsonWorkload       `json:"workload"`
	Endpoints   int                `json:"endpoints"`
	Seed        int64              `json:"seed"`
	Jitter      float64            `json:"arrivalJitterSeconds,omitempty"`
	JitterSeed  int64              `json:"jitterSeed,omitempty"`
	TTFTTarget  float64            `json:"ttftTargetSeconds"`
	EventsDelay float64            `json:"eventsDelaySeconds"`
	WallSeconds float64            `json:"wallSeconds"`
	Results     []fleetsim.Summary `json:"results"`
}

type jsonWorkload struct {
	Requests         int     `json:"requests"`
	SpanSeconds      float64 `json:"spanSeconds"`
	MeanInput        float64 `json:"meanInput"`
	MeanOutput       float64 `json:"meanOutput"`
	PrefixUpperBound float64 `json:"prefixUpperBound"`
}

func (r *report) writeJSON(path string, o *options) error {
	j := jsonReport{Scenario: r.name, Title: r.title, Rate: r.rate, Calibration: r.cal, Endpoints: len(r.fleet.Engines),
		Seed: o.seed, Jitter: o.jitter.Seconds(), JitterSeed: jitterSeed(o),
		TTFTTarget: o.ttftTarget.Seconds(), EventsDelay: o.eventsDelay.Seconds(), WallSeconds: r.wall.Seconds(),
		Workload: jsonWorkload{r.stats.Requests, r.stats.Span.Seconds(), r.stats.MeanInput, r.stats.MeanOutput, r.stats.PrefixUpperBound}}
	for _, res := range r.results {
		j.Results = append(j.Results, res.Summary)
	}
	b, err := json.MarshalIndent(j, "", "  ")
	if err != nil {
		return fmt.Errorf("json: %w", err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("json: %w", err)
	}
	return nil
}

// jitterSeed is the report's jitter seed: none without a jitter.
func jitterSeed(o *options) int64 {
	if o.jitter <= 0 {
		return 0
	}
	return o.jitterSeed
}

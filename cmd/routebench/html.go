package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// The page shows the tables and figures of every report in a routebench
// output folder together, plus optional text (the demo's live part). It is
// built from the JSON files, so it can be rebuilt without simulating again.

// pageColumn is one table column: a key of the JSON summary, its header and format.
type pageColumn struct{ key, header, format string }

var pageColumns = []pageColumn{
	{"policy", "policy", "%s"}, {"ttftP50", "TTFT p50 (s)", "%.3f"}, {"ttftP95", "TTFT p95 (s)", "%.3f"},
	{"ttftP99", "TTFT p99 (s)", "%.3f"}, {"e2eP50", "E2E p50 (s)", "%.2f"}, {"e2eP99", "E2E p99 (s)", "%.2f"},
	{"prefixHit", "prefix hit", "%.3f"}, {"rejected", "rejected", "%.0f"}, {"overTarget", "share over TTFT target", "%.3f"},
}

// reportOrder puts the brief's reports first; others follow by name.
var reportOrder = []string{"brief", "brief-import"}

type pageReport struct {
	Name, Title, Workload string
	Headline              string // kv against round-robin, when both ran
	Header                []string
	Rows                  []pageRow
	Figures               []string // paths relative to the page
	Note                  string
}

type pageRow struct {
	Cells     []string
	Highlight bool // kv: the policy the page is about
}

type pageData struct {
	Reports []pageReport
	Live    string
	Verdict string // the live run's verdict line, shown on its own
}

// writeIndex writes page (an HTML file) from the reports in dir, with the
// text of live (optional) as a last section.
func writeIndex(page, dir, live string) error {
	reps, err := loadPageReports(dir, filepath.Dir(page))
	if err != nil {
		return err
	}
	d := pageData{Reports: reps}
	if live != "" {
		b, err := os.ReadFile(live)
		if err != nil {
			return fmt.Errorf("index: live text: %w", err)
		}
		d.Live = string(b)
		d.Verdict = verdictLine(d.Live)
	}
	f, err := os.Create(page)
	if err != nil {
		return fmt.Errorf("index: %w", err)
	}
	err = pageTemplate.Execute(f, d)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("index %s: %w", page, err)
	}
	return nil
}

// loadPageReports reads every routebench JSON report in dir.
func loadPageReports(dir, pageDir string) ([]pageReport, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("index: no routebench JSON reports in %s", dir)
	}
	var out []pageReport
	for _, f := range files {
		r, err := loadPageReport(f, pageDir)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	slices.SortStableFunc(out, func(a, b pageReport) int { return orderKey(a.Name) - orderKey(b.Name) })
	return out, nil
}

func orderKey(name string) int {
	if i := slices.Index(reportOrder, name); i >= 0 {
		return i
	}
	return len(reportOrder)
}

type pageJSON struct {
	Scenario string           `json:"scenario"`
	Title    string           `json:"title"`
	Workload jsonWorkload     `json:"workload"`
	Results  []map[string]any `json:"results"`
}

// readPageJSON reads a routebench JSON report, keeping each result as a map so
// fields added later still reach the page.
func readPageJSON(path string) (pageJSON, error) {
	var j pageJSON
	b, err := os.ReadFile(path)
	if err == nil {
		err = json.Unmarshal(b, &j)
	}
	if err != nil || j.Scenario == "" {
		return j, fmt.Errorf("%s is not a routebench report: %v", path, err)
	}
	return j, nil
}

func loadPageReport(path, pageDir string) (pageReport, error) {
	j, err := readPageJSON(path)
	if err != nil {
		return pageReport{}, fmt.Errorf("index: %w", err)
	}
	r := pageReport{Name: j.Scenario, Title: j.Title, Note: reportNotes[j.Scenario],
		Workload: fmt.Sprintf("%d requests over %.0f s, mean prompt %.0f tokens, mean output %.0f tokens, prefix-hit upper bound %.3f",
			j.Workload.Requests, j.Workload.SpanSeconds, j.Workload.MeanInput, j.Workload.MeanOutput, j.Workload.PrefixUpperBound)}
	if r.Title == "" {
		r.Title = r.Name
	}
	for _, c := range pageColumns {
		r.Header = append(r.Header, c.header)
	}
	for _, res := range j.Results {
		r.Rows = append(r.Rows, pageRow{Cells: cellsOf(pageColumns, res), Highlight: res["policy"] == "kv"})
	}
	r.Headline = headline(j.Results)
	r.Figures, err = figures(path, pageDir)
	return r, err
}

// headline compares kv's TTFT with round-robin's in one sentence.
func headline(results []map[string]any) string {
	var rr, kv map[string]any
	for _, res := range results {
		switch res["policy"] {
		case "round-robin":
			rr = res
		case "kv":
			kv = res
		}
	}
	if rr == nil || kv == nil {
		return ""
	}
	part := func(key, name string) string {
		a, okA := rr[key].(float64)
		b, okB := kv[key].(float64)
		if !okA || !okB || a <= 0 {
			return ""
		}
		return fmt.Sprintf("%s %.2f s -> %.2f s (%+.0f%%)", name, a, b, (b-a)/a*100)
	}
	return "kv against round-robin, TTFT " + part("ttftP50", "p50") + ", " + part("ttftP95", "p95") + ", " + part("ttftP99", "p99")
}

// verdictLine is the last line of text that starts with "verdict:".
func verdictLine(text string) string {
	v := ""
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, "verdict:") {
			v = l
		}
	}
	return v
}

// cellsOf formats a result's values for cols; a missing value reads "–".
func cellsOf(cols []pageColumn, res map[string]any) []string {
	out := make([]string, len(cols))
	for i, c := range cols {
		switch v := res[c.key].(type) {
		case string:
			out[i] = v
		case float64:
			out[i] = fmt.Sprintf(c.format, v)
		default:
			out[i] = "–"
		}
	}
	return out
}

// figures lists the report's images, relative to the page's folder, in the
// order writePlots draws them. Images older than the JSON report are left out:
// they are from an earlier run into the same folder (plots follow the JSON).
func figures(jsonPath, pageDir string) ([]string, error) {
	base := strings.TrimSuffix(jsonPath, ".json")
	report, err := os.Stat(jsonPath)
	if err != nil {
		return nil, fmt.Errorf("index: %w", err)
	}
	var out []string
	for _, suffix := range []string{"-ttft", "-ttft-cdf", "-pending-tokens"} {
		for _, ext := range []string{".png", ".svg"} {
			if fi, err := os.Stat(base + suffix + ext); err != nil || fi.ModTime().Before(report.ModTime()) {
				continue
			}
			rel, err := filepath.Rel(pageDir, base+suffix+ext)
			if err != nil {
				return nil, fmt.Errorf("index: %w", err)
			}
			out = append(out, filepath.ToSlash(rel))
			break
		}
	}
	return out, nil
}

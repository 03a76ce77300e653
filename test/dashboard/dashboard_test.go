// Package dashboard checks the Grafana dashboard kvpick ships against the
// metrics the binary exports: every PromQL expression must parse and name
// only exported metrics, and the chart's copy must equal the source.
package dashboard

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"

	_ "github.com/kvpick/kvpick/pkg/kvindex" // registers the kvpick_kvindex_* collector, as the binary links it
	"github.com/kvpick/kvpick/pkg/telemetry"
)

const (
	source    = "../../config/dashboards/kvpick.json"
	chartCopy = "../../charts/kvpick/dashboards/kvpick.json"
)

// panel is the part of a Grafana panel this test reads; rows nest panels.
type panel struct {
	ID      int      `json:"id"`
	Title   string   `json:"title"`
	Type    string   `json:"type"`
	Targets []target `json:"targets"`
	Panels  []panel  `json:"panels"`
}

type target struct {
	Expr string `json:"expr"`
}

type dashboard struct {
	UID        string  `json:"uid"`
	Panels     []panel `json:"panels"`
	Templating struct {
		List []struct {
			Name       string `json:"name"`
			Definition string `json:"definition"`
		} `json:"list"`
	} `json:"templating"`
}

func load(t *testing.T) dashboard {
	t.Helper()
	b, err := os.ReadFile(source)
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("%s: %v", source, err)
	}
	return d
}

// TestChartCopyIdentical: the chart ships the dashboard from its own folder (helm reads files only inside the
// chart), so the copy must stay byte-identical to config/dashboards/kvpick.json.
func TestChartCopyIdentical(t *testing.T) {
	a, err := os.ReadFile(source)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(chartCopy)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Fatalf("%s differs from %s: run `cp %s %s`", chartCopy, source, strings.TrimPrefix(source, "../../"), strings.TrimPrefix(chartCopy, "../../"))
	}
}

// TestExpressionsNameExportedMetrics parses every expression of every panel and the variable queries.
func TestExpressionsNameExportedMetrics(t *testing.T) {
	d := load(t)
	names := telemetry.MetricNames()
	exprs := collect(d.Panels)
	if len(exprs) < 10 {
		t.Fatalf("only %d expressions found: the panel layout changed under the test", len(exprs))
	}
	for _, v := range d.Templating.List {
		if m := labelValues.FindStringSubmatch(v.Definition); m != nil {
			exprs = append(exprs, located{"variable " + v.Name, m[1]})
		}
	}
	for _, e := range exprs {
		if err := check(e.expr, names); err != nil {
			t.Errorf("%s: %v\n  expr: %s", e.where, err, e.expr)
		}
	}
}

// TestPanelsHaveRequiredContent: what the issue asks the dashboard to show is there (by metric).
func TestPanelsHaveRequiredContent(t *testing.T) {
	all := ""
	for _, e := range collect(load(t).Panels) {
		all += e.expr + "\n"
	}
	for _, want := range []string{"kvpick_requests_total", "kvpick_router_rejections_total", "kvpick_decision_duration_seconds_bucket",
		"kvpick_time_to_first_token_seconds_bucket", "kvpick_router_queue_pending_requests", "kvpick_router_queue_pending_isl_tokens",
		"kvpick_endpoint_active_prefill_tokens", "kvpick_endpoint_active_decode_blocks", "kvpick_kv_hit_ratio_sum",
		"kvpick_kv_observation_path", "kvpick_scrape_endpoint_state", "kvpick_kvevents_batches_total",
		"kvpick_replicasync_apply_lag_seconds_bucket", "kvpick_replicasync_queue_slack_seconds", "kvpick_replicasync_remote_inflight_requests"} {
		if !strings.Contains(all, want) {
			t.Errorf("no panel uses %s", want)
		}
	}
}

// TestCheckerCatchesMistakes: the checker itself refuses what it must.
func TestCheckerCatchesMistakes(t *testing.T) {
	names := map[string]bool{"kvpick_x_seconds": true, "kvpick_y_total": false}
	tests := []struct {
		expr string
		ok   bool
	}{
		{`rate(kvpick_y_total[$__rate_interval])`, true},
		{`histogram_quantile(0.9, sum by (le) (rate(kvpick_x_seconds_bucket{pool=~"$pool"}[5m])))`, true},
		{`rate(kvpick_y_total_bucket[5m])`, false}, // a counter has no buckets
		{`kvpick_nope`, false},
		{`{__name__="kvpick_nope"}`, false},
		{`sum(rate(kvpick_y_total[5m]`, false}, // does not parse
		{`sum(1)`, false},                      // names no metric
	}
	for _, tt := range tests {
		if err := check(tt.expr, names); (err == nil) != tt.ok {
			t.Errorf("check(%q) = %v, want ok=%v", tt.expr, err, tt.ok)
		}
	}
}

type located struct{ where, expr string }

func collect(ps []panel) []located {
	var out []located
	for _, p := range ps {
		for i, tg := range p.Targets {
			if tg.Expr != "" {
				out = append(out, located{fmt.Sprintf("panel %d %q target %d", p.ID, p.Title, i), tg.Expr})
			}
		}
		out = append(out, collect(p.Panels)...)
	}
	return out
}

var (
	labelValues = regexp.MustCompile(`^label_values\((.+),\s*\w+\)$`)
	rangeVar    = regexp.MustCompile(`\$__(rate_interval|interval|range)`)
	otherVar    = regexp.MustCompile(`\$\{?\w+\}?`)
)

// check parses expr (Grafana variables replaced by sample values) and returns an error naming every metric it
// selects that the binary does not export; an expression selecting no metric is an error too.
func check(expr string, names map[string]bool) error {
	expr = otherVar.ReplaceAllString(rangeVar.ReplaceAllString(expr, "5m"), "x")
	node, err := parser.NewParser(parser.Options{}).ParseExpr(expr)
	if err != nil {
		return fmt.Errorf("parse: %w", err)
	}
	var bad []string
	seen := 0
	parser.Inspect(node, func(n parser.Node, _ []parser.Node) error {
		vs, ok := n.(*parser.VectorSelector)
		if !ok {
			return nil
		}
		seen++
		if name := selectorName(vs); !exported(name, names) {
			bad = append(bad, name)
		}
		return nil
	})
	switch {
	case seen == 0:
		return fmt.Errorf("selects no metric")
	case len(bad) > 0:
		return fmt.Errorf("names metrics kvpick does not export: %v", bad)
	}
	return nil
}

func selectorName(vs *parser.VectorSelector) string {
	if vs.Name != "" {
		return vs.Name
	}
	for _, m := range vs.LabelMatchers {
		if m.Name == labels.MetricName && m.Type == labels.MatchEqual {
			return m.Value
		}
	}
	return "(selector without an exact metric name)"
}

// exported: the family itself, or a histogram's _bucket, _sum or _count series.
func exported(name string, names map[string]bool) bool {
	if _, ok := names[name]; ok {
		return true
	}
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		if base, ok := strings.CutSuffix(name, suffix); ok && names[base] {
			return true
		}
	}
	return false
}

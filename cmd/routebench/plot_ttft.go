package main

import (
	"fmt"
	"image/color"
	"math"
	"slices"
	"sort"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/kvpick/kvpick/pkg/fleetsim"
)

// Shades of one hue for p50 < p95 < p99: darker is further in the tail.
var percentileColors = []color.Color{
	color.RGBA{R: 0x9e, G: 0xca, B: 0xe1, A: 0xff},
	color.RGBA{R: 0x31, G: 0x82, B: 0xbd, A: 0xff},
	color.RGBA{R: 0x08, G: 0x30, B: 0x6b, A: 0xff},
}

// ttftBars: p50, p95 and p99 TTFT per policy as horizontal bars, the first
// policy at the top, with the TTFT target as a vertical line.
func ttftBars(r *report) (*figure, error) {
	if len(r.results) == 0 {
		return nil, nil
	}
	f := newFigure("-ttft", r.name+": time to first token per policy (lower is better)", "TTFT (s)", "")
	n := len(r.results)
	names := make([]string, n)
	vals := [3]plotter.Values{make(plotter.Values, n), make(plotter.Values, n), make(plotter.Values, n)}
	for i, res := range r.results {
		row := n - 1 - i // first policy on top
		names[row] = res.Policy
		s := &res.Summary
		vals[0][row], vals[1][row], vals[2][row] = float64(s.TTFTP50), float64(s.TTFTP95), float64(s.TTFTP99)
	}
	capRefused(vals[:])
	barW := vg.Points(8)
	for k, label := range []string{"p50", "p95", "p99"} {
		b, err := plotter.NewBarChart(vals[k], barW)
		if err != nil {
			return nil, fmt.Errorf("plot bars: %w", err)
		}
		b.Horizontal, b.Color, b.LineStyle.Width = true, percentileColors[k], 0
		b.Offset = barW * vg.Length(1-k) // p50 above p95 above p99 within a policy
		f.Plot.Add(b)
		f.Legend.Add(label+" TTFT", b)
	}
	if err := p95Labels(f, vals[1]); err != nil {
		return nil, err
	}
	f.Plot.NominalY(names...)
	f.Plot.Y.Tick.Label.Font.Size = vg.Points(11)
	f.Plot.X.Min = 0
	f.Plot.X.Max = max(f.Plot.X.Max, r.ttftTarget()) * 1.1 // room for the p95 labels
	f.Plot.X.Tick.Marker = plot.TickerFunc(plainTicks)
	if t := r.ttftTarget(); t > 0 {
		if err := targetLine(f, t, -0.6, float64(n)-0.4); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// p95Labels writes each p95 value at the end of its bar.
func p95Labels(f *figure, p95 plotter.Values) error {
	xys := make(plotter.XYs, len(p95))
	labels := make([]string, len(p95))
	for i, v := range p95 {
		xys[i] = plotter.XY{X: v, Y: float64(i)}
		labels[i] = fmt.Sprintf(" %.2f s", v)
	}
	l, err := plotter.NewLabels(plotter.XYLabels{XYs: xys, Labels: labels})
	if err != nil {
		return fmt.Errorf("plot labels: %w", err)
	}
	for i := range l.TextStyle {
		l.TextStyle[i].Font.Size = vg.Points(9)
		l.TextStyle[i].YAlign = draw.YCenter
	}
	l.Offset = vg.Point{X: vg.Points(3), Y: vg.Points(1.5)} // clear of the bar's end and of the p99 bar below
	f.Plot.Add(l)
	return nil
}

// targetLine draws the TTFT objective as a vertical line from y0 to y1.
func targetLine(f *figure, target, y0, y1 float64) error {
	l, err := plotter.NewLine(plotter.XYs{{X: target, Y: y0}, {X: target, Y: y1}})
	if err != nil {
		return fmt.Errorf("plot target: %w", err)
	}
	l.Color, l.Width, l.Dashes = color.RGBA{R: 0xc0, A: 0xff}, vg.Points(1.5), []vg.Length{vg.Points(5), vg.Points(3)}
	f.Plot.Add(l)
	f.Legend.Add(fmt.Sprintf("%.3g s TTFT target", target), l)
	return nil
}

// cdfPolicies picks what the CDF compares: round-robin, kv, and the two
// baselines (policies outside kvpick's kv modes) with the lowest p95 TTFT.
func cdfPolicies(r *report) []string {
	var base []*fleetsim.Result
	for _, res := range r.results {
		if res.Policy != fleetsim.PolicyRoundRobin && !isKVFamily(res.Policy) {
			base = append(base, res)
		}
	}
	sort.SliceStable(base, func(i, j int) bool { return base[i].Summary.TTFTP95 < base[j].Summary.TTFTP95 })
	var out []string
	for _, p := range []string{fleetsim.PolicyRoundRobin, fleetsim.PolicyKV} {
		if r.result(p) != nil {
			out = append(out, p)
		}
	}
	for _, res := range base[:min(2, len(base))] {
		out = append(out, res.Policy)
	}
	return out
}

// ttftCDF: share of completed requests with TTFT at most x (log x), for the
// policies worth comparing, each with its p95 marked.
func ttftCDF(r *report) (*figure, error) {
	policies := cdfPolicies(r)
	if len(policies) == 0 {
		return nil, nil
	}
	f := newFigure("-ttft-cdf", r.name+": TTFT distribution (further left is better)",
		"TTFT (s, log scale)", "share of completed requests")
	f.Plot.X.Scale, f.Plot.X.Tick.Marker = plot.LogScale{}, plot.LogTicks{Prec: -1}
	f.Plot.Y.Min, f.Plot.Y.Max = 0, 1.02
	st := styles(policies)
	drawn := 0
	for _, name := range policies {
		res := r.result(name)
		pts := cdfPoints(res)
		if len(pts) == 0 {
			continue
		}
		drawn++
		label := fmt.Sprintf("%s (p95 %.2f s)", name, res.Summary.TTFTP95)
		if err := f.AddLine(name, label, st[name], pts); err != nil {
			return nil, err
		}
		if p95 := float64(res.Summary.TTFTP95); !math.IsInf(p95, 1) { // refusals past 5 %: no finite p95 to mark
			if err := p95Mark(f, p95, st[name]); err != nil {
				return nil, err
			}
		}
	}
	if drawn == 0 {
		return nil, nil // no completed request to plot
	}
	if t := r.ttftTarget(); t > 0 {
		if err := targetLine(f, t, 0, 1.02); err != nil {
			return nil, err
		}
	}
	return f, p95Guide(f)
}

// cdfPoints is the empirical CDF of completed requests' TTFT, at most maxPoints points.
func cdfPoints(res *fleetsim.Result) plotter.XYs {
	var ts []float64
	for k := range res.Records {
		if rec := &res.Records[k]; rec.Completed() {
			ts = append(ts, max(rec.TTFT().Seconds(), 1e-3))
		}
	}
	if len(ts) == 0 {
		return nil
	}
	slices.Sort(ts)
	step := max(1, len(ts)/maxPoints)
	var pts plotter.XYs
	for k := 0; k < len(ts); k += step {
		pts = append(pts, plotter.XY{X: ts[k], Y: float64(k+1) / float64(len(ts))})
	}
	return append(pts, plotter.XY{X: ts[len(ts)-1], Y: 1})
}

// p95Mark puts a dot where a policy's CDF crosses 0.95.
func p95Mark(f *figure, p95 float64, st lineStyle) error {
	s, err := plotter.NewScatter(plotter.XYs{{X: max(p95, 1e-3), Y: 0.95}})
	if err != nil {
		return fmt.Errorf("plot p95 mark: %w", err)
	}
	s.GlyphStyle = draw.GlyphStyle{Color: st.Color, Radius: vg.Points(4.5), Shape: draw.CircleGlyph{}}
	f.Plot.Add(s)
	return nil
}

// p95Guide draws the thin horizontal line at 0.95 the p95 dots sit on.
func p95Guide(f *figure) error {
	f.Plot.X.Min = max(f.Plot.X.Min, 1e-3)
	l, err := plotter.NewLine(plotter.XYs{{X: f.Plot.X.Min, Y: 0.95}, {X: f.Plot.X.Max, Y: 0.95}})
	if err != nil {
		return fmt.Errorf("plot p95 guide: %w", err)
	}
	l.Color, l.Width = color.Gray{Y: 0x99}, vg.Points(0.8)
	f.Plot.Add(l)
	f.Legend.Add("• p95 of each policy", l)
	return nil
}

// capRefused draws a percentile that refusals made infinite as a bar 20 %
// past the longest finite one (the tables say +Inf), so one refusing policy
// neither breaks the chart nor flattens the others.
func capRefused(vals []plotter.Values) {
	longest := 0.0
	for _, vs := range vals {
		for _, v := range vs {
			if !math.IsInf(v, 1) {
				longest = max(longest, v)
			}
		}
	}
	for _, vs := range vals {
		for i, v := range vs {
			if math.IsInf(v, 1) {
				vs[i] = 1.2 * max(longest, 1e-3)
			}
		}
	}
}

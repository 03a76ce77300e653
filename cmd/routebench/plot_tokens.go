package main

import (
	"fmt"
	"image/color"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"

	"github.com/kvpick/kvpick/pkg/fleetsim"
)

// tokenBin is the averaging window of the pending-tokens figure: the raw
// samples jump with every dispatch and first token, which hides the trend.
const tokenBin = time.Second

// Around a burst the figure shows this much before it and after it ends:
// outside, every policy's line is the same steady-load noise.
const burstBefore, burstAfter = 30 * time.Second, 75 * time.Second

// tokenPolicies are the policies the pending-tokens figure compares.
var tokenPolicies = []string{fleetsim.PolicyRoundRobin, fleetsim.PolicyKV, fleetsim.PolicyKVQueue}

// burstWindow is when a report's workload adds its document-import burst.
func burstWindow(r *report) (from, to time.Duration, ok bool) {
	if r.name != "brief-import" {
		return 0, 0, false
	}
	return briefImportAt, briefImportAt + briefImportWindow, true
}

// pendingTokens: prompt tokens waiting for prefill (picker queue plus
// dispatched without a first token), averaged per tokenBin, for round-robin,
// kv and kv+queue, around a report's import burst (shaded). Reports without a
// known burst get no such figure: under steady load every policy's line is
// the same noise.
func pendingTokens(r *report) (*figure, error) {
	from, to, burst := burstWindow(r)
	if !burst {
		return nil, nil
	}
	var policies []string
	for _, p := range tokenPolicies {
		if res := r.result(p); res != nil && len(res.Series) > 0 {
			policies = append(policies, p)
		}
	}
	if len(policies) == 0 {
		return nil, nil
	}
	f := newFigure("-pending-tokens", r.name+": prompt tokens waiting for prefill around the document import (lower is better)",
		"time (s)", "thousand tokens ("+tokenBin.String()+" average)")
	top := 0.0
	lines := map[string]plotter.XYs{}
	for _, p := range policies {
		lines[p] = binned(r.result(p).Series)
		for _, pt := range lines[p] {
			top = max(top, pt.Y)
		}
	}
	if err := shade(f, from, to, top*1.05); err != nil {
		return nil, err
	}
	for p := range lines {
		lines[p] = within(lines[p], max(0, (from-burstBefore).Seconds()), (to + burstAfter).Seconds())
	}
	f.Plot.X.Tick.Marker = plot.TickerFunc(plainTicks)
	st := styles(policies)
	for _, p := range policies {
		if err := f.AddLine(p, p, st[p], lines[p]); err != nil {
			return nil, err
		}
	}
	f.Plot.Y.Min = 0
	return f, nil
}

// binned averages picker-queued plus dispatched-but-unprefilled prompt tokens per tokenBin.
func binned(series []fleetsim.Sample) plotter.XYs {
	var pts plotter.XYs
	for i := 0; i < len(series); {
		start := series[i].At.Truncate(tokenBin)
		sum, n := 0.0, 0
		for ; i < len(series) && series[i].At < start+tokenBin; i++ {
			sum += float64(series[i].QueuedTokens + series[i].PrefillDue)
			n++
		}
		pts = append(pts, plotter.XY{X: (start + tokenBin/2).Seconds(), Y: sum / float64(n) / 1000})
	}
	return pts
}

// within keeps the points with from <= X <= to.
func within(pts plotter.XYs, from, to float64) plotter.XYs {
	var out plotter.XYs
	for _, p := range pts {
		if p.X >= from && p.X <= to {
			out = append(out, p)
		}
	}
	return out
}

// shade fills the burst window, behind the lines.
func shade(f *figure, from, to time.Duration, top float64) error {
	a, b := from.Seconds(), to.Seconds()
	poly, err := plotter.NewPolygon(plotter.XYs{{X: a, Y: 0}, {X: b, Y: 0}, {X: b, Y: top}, {X: a, Y: top}})
	if err != nil {
		return fmt.Errorf("plot burst window: %w", err)
	}
	poly.Color = color.RGBA{R: 0xff, G: 0xd5, B: 0x80, A: 0xff}
	poly.LineStyle.Width = 0
	f.Plot.Add(poly)
	f.Legend.Add(fmt.Sprintf("document import (%.0f-%.0f s)", a, b), poly)
	return nil
}

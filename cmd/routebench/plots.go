package main

import (
	"image/color"
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"

	"github.com/kvpick/kvpick/internal/plotfig"
	"github.com/kvpick/kvpick/pkg/fleetsim"
)

// maxPoints bounds each plotted line (the files stay small).
const maxPoints = 600

// figure, its style and its palette are plotfig's (the soak draws with them too).
type (
	figure    = plotfig.Figure
	lineStyle = plotfig.Style
)

var newFigure = plotfig.New

func style(c color.Color, dashes []vg.Length, width vg.Length) lineStyle {
	return lineStyle{Color: c, Dashes: dashes, Width: width}
}

var (
	grey, vermillion, blue, green  = plotfig.Grey, plotfig.Vermillion, plotfig.Blue, plotfig.Green
	purple, orange, sky            = plotfig.Purple, plotfig.Orange, plotfig.Sky
	solid, dashed, dotted, dashDot = plotfig.Solid, plotfig.Dashed, plotfig.Dotted, plotfig.DashDot
)

// writePlots draws the report's figures (TTFT percentiles as bars, the TTFT
// CDF of the policies worth comparing, and prompt tokens awaiting prefill over
// time) as files of format (png or svg) next to base; returns their paths.
func writePlots(base, format string, r *report) ([]string, error) {
	builders := []func(*report) (*figure, error){ttftBars, ttftCDF, pendingTokens}
	var paths []string
	for _, build := range builders {
		f, err := build(r)
		if err != nil {
			return nil, err
		}
		if f == nil {
			continue // nothing to compare in this report
		}
		path := base + f.Suffix + "." + format
		if err := f.Save(path, format); err != nil {
			return nil, err
		}
		paths = append(paths, path)
	}
	return paths, nil
}

var fixedStyles = map[string]lineStyle{
	fleetsim.PolicyRoundRobin: style(grey, dashed, vg.Points(1.8)),
	fleetsim.PolicyKV:         style(vermillion, solid, vg.Points(2.6)),
	fleetsim.PolicyKVQueue:    style(purple, solid, vg.Points(1.8)),
	fleetsim.PolicyKVObserved: style(orange, dotted, vg.Points(1.8)),
}

// baselineStyles go, in order, to the other policies a figure shows.
var baselineStyles = []lineStyle{style(blue, dashDot, vg.Points(1.8)), style(green, dotted, vg.Points(2.2)), style(sky, dashed, vg.Points(1.8))}

// styles assigns a style to each policy of a figure.
func styles(policies []string) map[string]lineStyle {
	out := map[string]lineStyle{}
	next := 0
	for _, p := range policies {
		if s, ok := fixedStyles[p]; ok {
			out[p] = s
			continue
		}
		out[p] = baselineStyles[next%len(baselineStyles)]
		next++
	}
	return out
}

// isKVFamily reports whether a policy is one of kvpick's kv modes.
func isKVFamily(policy string) bool { return strings.HasPrefix(policy, fleetsim.PolicyKV) }

// result finds a policy's result in the report.
func (r *report) result(policy string) *fleetsim.Result {
	for _, res := range r.results {
		if res.Policy == policy {
			return res
		}
	}
	return nil
}

// ttftTarget is the report's TTFT objective in seconds (0 when unknown).
func (r *report) ttftTarget() float64 {
	if len(r.results) == 0 {
		return 0
	}
	return r.results[0].Summary.TTFTTargetSeconds
}

// plainTicks labels round steps (0.5, 1, 2, 5, 10, ... apart; at most about
// eight) without trailing zeros: "125", not "125.00", and 1 s always labelled
// on a seconds axis that reaches it.
func plainTicks(min, max float64) []plot.Tick {
	step := 1e-3
	for _, m := range []float64{1, 2, 5} {
		for s := 1e-3; s < 1e9; s *= 10 {
			if (max-min)/(s*m) <= 8 && (step == 1e-3 || s*m < step) {
				step = s * m
			}
		}
	}
	var ticks []plot.Tick
	for v := math.Ceil(min/step) * step; v <= max+step/1e6; v += step {
		ticks = append(ticks, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'g', 6, 64)})
	}
	return ticks
}

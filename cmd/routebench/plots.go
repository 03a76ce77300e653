package main

import (
	"fmt"
	"image/color"
	"math"
	"os"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/kvpick/kvpick/pkg/fleetsim"
)

// maxPoints bounds each plotted line (the files stay small).
const maxPoints = 600

// Figure size and the column right of the data that holds the legend, so the
// legend never covers a line.
const (
	figW, figH   = 11 * vg.Inch, 5 * vg.Inch
	legendColumn = 3 * vg.Inch
	margin       = 8 * vg.Millimeter / 3
	pngDPI       = 110
)

// figure is a plot and its legend, drawn beside (not over) the data.
type figure struct {
	suffix string
	plot   *plot.Plot
	legend plot.Legend
}

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
		path := base + f.suffix + "." + format
		if err := f.save(path, format); err != nil {
			return nil, err
		}
		paths = append(paths, path)
	}
	return paths, nil
}

// save renders the figure: the plot on the left, the legend in its own column.
func (f *figure) save(path, format string) error {
	var c vg.CanvasWriterTo
	switch format {
	case "png":
		c = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(figW, figH), vgimg.UseDPI(pngDPI))}
	case "svg":
		c = vgsvg.New(figW, figH)
	default:
		return fmt.Errorf("plot %s: unknown format %q", path, format)
	}
	dc := draw.New(c)
	f.plot.Draw(draw.Crop(dc, margin, -legendColumn, margin, -2*margin))
	f.legend.Top, f.legend.Left = true, true
	f.legend.Draw(draw.Crop(dc, figW-legendColumn+0.15*vg.Inch, 0, 0, -0.45*vg.Inch))
	out, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("plot %s: %w", path, err)
	}
	_, err = c.WriteTo(out)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("plot %s: %w", path, err)
	}
	return nil
}

func newFigure(suffix, title, x, y string) *figure {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font.Size = vg.Points(13)
	p.Title.Padding = vg.Points(8)
	p.X.Label.Text, p.Y.Label.Text = x, y
	p.Add(plotter.NewGrid())
	l := plot.NewLegend()
	l.TextStyle.Font.Size = vg.Points(11)
	l.Padding = vg.Points(4)
	l.ThumbnailWidth = vg.Points(28)
	return &figure{suffix: suffix, plot: p, legend: l}
}

// lineStyle is how one policy is drawn in every figure, so a policy keeps its
// colour from plot to plot: kv is the bold red line, round-robin the grey dashes.
type lineStyle struct {
	color  color.Color
	dashes []vg.Length
	width  vg.Length
}

// Okabe–Ito colours: distinct for colour-blind readers too.
var (
	grey       = color.RGBA{R: 0x55, G: 0x55, B: 0x55, A: 0xff}
	vermillion = color.RGBA{R: 0xd5, G: 0x5e, B: 0x00, A: 0xff}
	blue       = color.RGBA{R: 0x00, G: 0x72, B: 0xb2, A: 0xff}
	green      = color.RGBA{R: 0x00, G: 0x9e, B: 0x73, A: 0xff}
	purple     = color.RGBA{R: 0xcc, G: 0x79, B: 0xa7, A: 0xff}
	orange     = color.RGBA{R: 0xe6, G: 0x9f, B: 0x00, A: 0xff}
	sky        = color.RGBA{R: 0x56, G: 0xb4, B: 0xe9, A: 0xff}
)

var (
	solid   []vg.Length
	dashed  = []vg.Length{vg.Points(7), vg.Points(4)}
	dotted  = []vg.Length{vg.Points(2), vg.Points(3)}
	dashDot = []vg.Length{vg.Points(8), vg.Points(3), vg.Points(2), vg.Points(3)}
)

var fixedStyles = map[string]lineStyle{
	fleetsim.PolicyRoundRobin: {grey, dashed, vg.Points(1.8)},
	fleetsim.PolicyKV:         {vermillion, solid, vg.Points(2.6)},
	fleetsim.PolicyKVQueue:    {purple, solid, vg.Points(1.8)},
	fleetsim.PolicyKVObserved: {orange, dotted, vg.Points(1.8)},
}

// baselineStyles go, in order, to the other policies a figure shows.
var baselineStyles = []lineStyle{{blue, dashDot, vg.Points(1.8)}, {green, dotted, vg.Points(2.2)}, {sky, dashed, vg.Points(1.8)}}

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

func (f *figure) addLine(name, label string, st lineStyle, pts plotter.XYs) error {
	l, err := plotter.NewLine(pts)
	if err != nil {
		return fmt.Errorf("plot line %s: %w", name, err)
	}
	l.Color, l.Dashes, l.Width = st.color, st.dashes, st.width
	f.plot.Add(l)
	f.legend.Add(label, l)
	return nil
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

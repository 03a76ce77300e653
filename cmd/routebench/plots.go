package main

import (
	"fmt"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/kvpick/kvpick/pkg/fleetsim"
)

// maxPoints bounds each plotted line (the files stay small).
const maxPoints = 600

// writePlots draws the TTFT CDF per policy, requests waiting over time and
// prompt tokens waiting over time, as files of format (svg or png) next to
// base; returns their paths.
func writePlots(base, format string, r *report) ([]string, error) {
	plots := []struct {
		suffix string
		build  func(*report) (*plot.Plot, error)
	}{{"-ttft-cdf", ttftCDF}, {"-queue", waitingRequests}, {"-pending-tokens", waitingTokens}}
	var paths []string
	for _, pl := range plots {
		p, err := pl.build(r)
		if err != nil {
			return nil, err
		}
		path := base + pl.suffix + "." + format
		if err := p.Save(9*vg.Inch, 5*vg.Inch, path); err != nil {
			return nil, fmt.Errorf("plot %s: %w", path, err)
		}
		paths = append(paths, path)
	}
	return paths, nil
}

func newPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text, p.Y.Label.Text = x, y
	p.Legend.Top = true
	p.Add(plotter.NewGrid())
	return p
}

func addLine(p *plot.Plot, i int, name string, pts plotter.XYs) error {
	l, err := plotter.NewLine(pts)
	if err != nil {
		return fmt.Errorf("plot line %s: %w", name, err)
	}
	l.Color = plotutil.Color(i)
	l.Dashes = plotutil.Dashes(i / 5)
	l.Width = vg.Points(1.2)
	p.Add(l)
	p.Legend.Add(name, l)
	return nil
}

// ttftCDF: share of completed requests with TTFT at most x (log-scaled x).
func ttftCDF(r *report) (*plot.Plot, error) {
	p := newPlot(r.name+": TTFT CDF", "TTFT (s, log scale)", "share of completed requests")
	p.X.Scale, p.X.Tick.Marker = plot.LogScale{}, plot.LogTicks{Prec: -1}
	for i, res := range r.results {
		var ts []float64
		for k := range res.Records {
			if rec := &res.Records[k]; rec.Completed() {
				ts = append(ts, max(rec.TTFT().Seconds(), 1e-3))
			}
		}
		if len(ts) == 0 {
			continue
		}
		slices.Sort(ts)
		step := max(1, len(ts)/maxPoints)
		var pts plotter.XYs
		for k := 0; k < len(ts); k += step {
			pts = append(pts, plotter.XY{X: ts[k], Y: float64(k+1) / float64(len(ts))})
		}
		pts = append(pts, plotter.XY{X: ts[len(ts)-1], Y: 1})
		if err := addLine(p, i, res.Policy, pts); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// series plots one value of the fleet samples per policy over time.
func series(r *report, title, ylabel string, value func(*fleetsim.Sample) float64) (*plot.Plot, error) {
	p := newPlot(r.name+": "+title, "time (s)", ylabel)
	for i, res := range r.results {
		if len(res.Series) == 0 {
			continue
		}
		step := max(1, len(res.Series)/maxPoints)
		var pts plotter.XYs
		for k := 0; k < len(res.Series); k += step {
			// The peak of each bucket, so downsampling does not hide spikes.
			v := 0.0
			for j := k; j < min(k+step, len(res.Series)); j++ {
				v = max(v, value(&res.Series[j]))
			}
			pts = append(pts, plotter.XY{X: res.Series[k].At.Seconds(), Y: v})
		}
		if err := addLine(p, i, res.Policy, pts); err != nil {
			return nil, err
		}
	}
	return p, nil
}

func waitingRequests(r *report) (*plot.Plot, error) {
	return series(r, "requests waiting (picker queue + engine queues)", "requests",
		func(s *fleetsim.Sample) float64 { return float64(s.QueuedRequests + s.EngineWaiting) })
}

func waitingTokens(r *report) (*plot.Plot, error) {
	return series(r, "prompt tokens awaiting prefill (picker queue + dispatched)", "tokens",
		func(s *fleetsim.Sample) float64 { return float64(s.QueuedTokens + s.PrefillDue) })
}

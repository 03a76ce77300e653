package soak

import (
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/kvpick/kvpick/internal/plotfig"
)

// writeOutputs writes samples.csv, goroutines.svg, heap.svg and summary.txt into dir.
func writeOutputs(dir string, samples []sample, v verdict) error {
	if err := writeCSV(filepath.Join(dir, "samples.csv"), samples); err != nil {
		return err
	}
	for _, fig := range []struct {
		name, title, unit string
		series            map[string]func(sample) float64
	}{
		{"goroutines", "kvpick replicas: goroutines (thin) and those besides the open streams (bold)", "goroutines",
			map[string]func(sample) float64{
				"":                 func(s sample) float64 { return s.Goroutines },
				" besides streams": func(s sample) float64 { return s.Goroutines - s.Streams }}},
		{"heap", "kvpick replicas: heap in use (thin) and next GC goal (bold)", "MiB", map[string]func(sample) float64{
			" in use": func(s sample) float64 { return s.HeapInuse / (1 << 20) },
			" goal":   func(s sample) float64 { return s.HeapGoal / (1 << 20) }}},
	} {
		if err := plot(filepath.Join(dir, fig.name+".svg"), fig.title, fig.unit, samples, fig.series); err != nil {
			return err
		}
	}
	failed := ""
	for _, f := range v.failures {
		failed += "FAILED: " + f + "\n"
	}
	return os.WriteFile(filepath.Join(dir, "summary.txt"), []byte(v.text+failed), 0o644)
}

func writeCSV(path string, samples []sample) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("soak csv: %w", err)
	}
	w := csv.NewWriter(f)
	w.Write([]string{"seconds", "replica", "goroutines", "heap_inuse_bytes", "heap_goal_bytes", "active_work", "active_prefill_tokens", "queued", "open_streams", "requests_total", "error"}) //nolint:errcheck // w.Error below
	for _, s := range samples {
		w.Write([]string{strconv.FormatFloat(s.At.Seconds(), 'f', 2, 64), strconv.Itoa(s.Replica), g(s.Goroutines), g(s.HeapInuse), //nolint:errcheck // w.Error below
			g(s.HeapGoal), g(s.Active), g(s.Prefill), g(s.Queued), g(s.Streams), g(s.Requests), s.Err})
	}
	w.Flush()
	if err := w.Error(); err != nil {
		f.Close()
		return fmt.Errorf("soak csv: %w", err)
	}
	return f.Close()
}

func g(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

var replicaColours = []plotfig.Style{{Color: plotfig.Vermillion}, {Color: plotfig.Blue}, {Color: plotfig.Green},
	{Color: plotfig.Purple}, {Color: plotfig.Orange}, {Color: plotfig.Sky}, {Color: plotfig.Grey}}

// plot draws one line per replica and series over time.
func plot(path, title, unit string, samples []sample, series map[string]func(sample) float64) error {
	f := plotfig.New("", title, "seconds since the load started", unit)
	f.Plot.Y.Min = 0
	for r := 0; ; r++ {
		mine := window(samples, r, 0, 1<<62)
		if len(mine) == 0 {
			break
		}
		for _, name := range []string{"", " besides streams", " in use", " goal"} {
			get, ok := series[name]
			if !ok {
				continue
			}
			st := replicaColours[r%len(replicaColours)]
			st.Width = vg.Points(1.2)
			if name == " goal" || name == " besides streams" {
				st.Width = vg.Points(2.4)
			}
			pts := make(plotter.XYs, len(mine))
			for i, s := range mine {
				pts[i] = plotter.XY{X: s.At.Seconds(), Y: get(s)}
			}
			label := fmt.Sprintf("replica %d%s", r, name)
			if err := f.AddLine(label, label, st, pts); err != nil {
				return err
			}
		}
	}
	return f.Save(path, "svg")
}

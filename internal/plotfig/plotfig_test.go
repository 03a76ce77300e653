package plotfig

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// A figure with a line saves as SVG and PNG; another format is refused with
// the path and the format named, and no file is written.
func TestSave(t *testing.T) {
	dir := t.TempDir()
	f := New("-x", "title", "x", "y")
	if err := f.AddLine("a", "series a", Style{Color: Blue, Dashes: Dashed, Width: vg.Points(2)}, plotter.XYs{{X: 0, Y: 1}, {X: 1, Y: 2}}); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		format, want string // want: start of the file, or of the error
	}{
		{"svg", "<?xml"},
		{"png", "\x89PNG"},
		{"gif", `unknown format "gif"`},
	}
	for _, tc := range cases {
		path := filepath.Join(dir, "f."+tc.format)
		err := f.Save(path, tc.format)
		data, _ := os.ReadFile(path)
		switch {
		case err != nil && (!strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), path) || data != nil):
			t.Errorf("%s: error %v, file %d bytes", tc.format, err, len(data))
		case err == nil && !strings.HasPrefix(string(data), tc.want):
			t.Errorf("%s: file starts %q", tc.format, data[:min(len(data), 8)])
		}
	}
	if err := f.AddLine("bad", "bad", Style{}, plotter.XYs{{X: 0, Y: math.NaN()}}); err == nil {
		t.Error("a NaN point was drawn")
	}
}

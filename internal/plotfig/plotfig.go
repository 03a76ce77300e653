// Package plotfig draws the project's figures (routebench's reports, the
// soak's time series) in one manner: a plot with its legend in a column of
// its own, never over the data, saved as PNG or SVG.
package plotfig

import (
	"fmt"
	"image/color"
	"os"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Figure size and the column right of the data that holds the legend, so the
// legend never covers a line.
const (
	figW, figH   = 11 * vg.Inch, 5 * vg.Inch
	legendColumn = 3 * vg.Inch
	margin       = 8 * vg.Millimeter / 3
	pngDPI       = 110
)

// Figure is a plot and its legend, drawn beside (not over) the data. Suffix
// names the figure's file next to a report's base path.
type Figure struct {
	Suffix string
	Plot   *plot.Plot
	Legend plot.Legend
}

// New returns an empty figure with a grid, a title and axis labels.
func New(suffix, title, x, y string) *Figure {
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
	return &Figure{Suffix: suffix, Plot: p, Legend: l}
}

// Save renders the figure to path as format "png" or "svg": the plot on the
// left, the legend in its own column.
func (f *Figure) Save(path, format string) error {
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
	f.Plot.Draw(draw.Crop(dc, margin, -legendColumn, margin, -2*margin))
	f.Legend.Top, f.Legend.Left = true, true
	f.Legend.Draw(draw.Crop(dc, figW-legendColumn+0.15*vg.Inch, 0, 0, -0.45*vg.Inch))
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

// Style is how one series is drawn.
type Style struct {
	Color  color.Color
	Dashes []vg.Length
	Width  vg.Length
}

// AddLine draws pts in style st, labelled in the legend.
func (f *Figure) AddLine(name, label string, st Style, pts plotter.XYs) error {
	l, err := plotter.NewLine(pts)
	if err != nil {
		return fmt.Errorf("plot line %s: %w", name, err)
	}
	l.Color, l.Dashes, l.Width = st.Color, st.Dashes, st.Width
	f.Plot.Add(l)
	f.Legend.Add(label, l)
	return nil
}

// Okabe–Ito colours: distinct for colour-blind readers too.
var (
	Grey       = color.RGBA{R: 0x55, G: 0x55, B: 0x55, A: 0xff}
	Vermillion = color.RGBA{R: 0xd5, G: 0x5e, B: 0x00, A: 0xff}
	Blue       = color.RGBA{R: 0x00, G: 0x72, B: 0xb2, A: 0xff}
	Green      = color.RGBA{R: 0x00, G: 0x9e, B: 0x73, A: 0xff}
	Purple     = color.RGBA{R: 0xcc, G: 0x79, B: 0xa7, A: 0xff}
	Orange     = color.RGBA{R: 0xe6, G: 0x9f, B: 0x00, A: 0xff}
	Sky        = color.RGBA{R: 0x56, G: 0xb4, B: 0xe9, A: 0xff}
)

// Dash patterns.
var (
	Solid   []vg.Length
	Dashed  = []vg.Length{vg.Points(7), vg.Points(4)}
	Dotted  = []vg.Length{vg.Points(2), vg.Points(3)}
	DashDot = []vg.Length{vg.Points(8), vg.Points(3), vg.Points(2), vg.Points(3)}
)

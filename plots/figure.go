package plots

import (
	"bytes"
	"fmt"
	"image/color"
	"io"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// PNGDPI is the resolution of PNG figures.
const PNGDPI = 200

// ColumnWidth is the width of one paper column.
const ColumnWidth = 3.3 * vg.Inch

// Font sizes chosen to read at ColumnWidth.
const (
	labelSize  = font.Length(8.5)
	tickSize   = font.Length(7.5)
	legendSize = font.Length(7.5)
)

// Figure is a stack of panels sharing one legend drawn in a strip above
// them (so the legend never covers data).
type Figure struct {
	// Name is the file stem (the experiment's name).
	Name string
	// Caption describes the figure for report.md and the paper.
	Caption string
	// Panels are drawn top to bottom, each PanelHeight tall.
	Panels []*plot.Plot
	// Width is the figure's width (ColumnWidth by default).
	Width, PanelHeight vg.Length
	// LegendCols is the number of legend columns (default 2).
	LegendCols int
	entries    []legendEntry
}

type legendEntry struct {
	name   string
	thumbs []plot.Thumbnailer
}

// AddLegend adds a legend entry (once per name).
func (f *Figure) AddLegend(name string, thumbs ...plot.Thumbnailer) {
	for _, e := range f.entries {
		if e.name == name {
			return
		}
	}
	f.entries = append(f.entries, legendEntry{name, thumbs})
}

// LegendNames lists the legend's entries in order.
func (f *Figure) LegendNames() []string {
	var out []string
	for _, e := range f.entries {
		out = append(out, e.name)
	}
	return out
}

func newPanel(xlabel, ylabel string) *plot.Plot {
	p := plot.New()
	p.X.Label.Text, p.Y.Label.Text = xlabel, ylabel
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font.Size = labelSize
		a.Tick.Label.Font.Size = tickSize
		a.Label.Padding = vg.Points(2)
	}
	p.Title.TextStyle.Font.Size = labelSize
	p.Legend.TextStyle.Font.Size = legendSize
	return p
}

func (f *Figure) size() (w, legendH, panelH vg.Length, cols int) {
	w, panelH, cols = f.Width, f.PanelHeight, f.LegendCols
	if w == 0 {
		w = ColumnWidth
	}
	if panelH == 0 {
		panelH = 2.2 * vg.Inch
	}
	if cols == 0 {
		cols = 2
	}
	if n := len(f.entries); n > 0 {
		rows := (n + cols - 1) / cols
		legendH = vg.Length(rows)*legendRowHeight() + vg.Points(4)
	}
	return
}

func legendRowHeight() vg.Length {
	l := plot.NewLegend()
	l.TextStyle.Font.Size = legendSize
	return l.TextStyle.Rectangle("Xg").Max.Y + vg.Points(1.5)
}

// Draw draws the figure on c.
func (f *Figure) Draw(c draw.Canvas) {
	w, legendH, panelH, cols := f.size()
	_ = w
	top := c.Max.Y
	if len(f.entries) > 0 {
		rows := (len(f.entries) + cols - 1) / cols
		colW := (c.Max.X - c.Min.X - vg.Points(4)) / vg.Length(cols)
		for j := range cols {
			l := plot.NewLegend()
			l.TextStyle.Font.Size = legendSize
			l.Top, l.Left = true, true
			l.ThumbnailWidth = vg.Points(14)
			l.Padding = vg.Points(1.5)
			for i := j * rows; i < min((j+1)*rows, len(f.entries)); i++ {
				l.Add(f.entries[i].name, f.entries[i].thumbs...)
			}
			x0 := c.Min.X + vg.Points(4) + vg.Length(j)*colW
			l.Draw(draw.Canvas{Canvas: c.Canvas, Rectangle: vg.Rectangle{
				Min: vg.Point{X: x0, Y: top - legendH}, Max: vg.Point{X: x0 + colW, Y: top - vg.Points(2)}}})
		}
		top -= legendH
	}
	for i, p := range f.Panels {
		r := vg.Rectangle{Min: vg.Point{X: c.Min.X, Y: top - vg.Length(i+1)*panelH}, Max: vg.Point{X: c.Max.X, Y: top - vg.Length(i)*panelH}}
		p.Draw(draw.Canvas{Canvas: c.Canvas, Rectangle: r})
	}
}

// Size returns the figure's width and height.
func (f *Figure) Size() (w, h vg.Length) {
	w, legendH, panelH, _ := f.size()
	return w, legendH + vg.Length(len(f.Panels))*panelH
}

// WriterTo renders the figure in format png, svg or pdf.
func (f *Figure) WriterTo(format string) (io.WriterTo, error) {
	switch format {
	case "png", "svg", "pdf":
	default:
		return nil, fmt.Errorf("figure format %q; use png, svg or pdf", format)
	}
	w, h := f.Size()
	var c vg.CanvasWriterTo
	if format == "png" {
		c = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(PNGDPI))}
	} else {
		var err error
		if c, err = draw.NewFormattedCanvas(w, h, format); err != nil {
			return nil, err
		}
	}
	dc := draw.New(c)
	if format == "png" {
		// an opaque background so the image reads in any viewer
		dc.SetColor(color.White)
		dc.Fill(dc.Rectangle.Path())
	}
	f.Draw(dc)
	return c, nil
}

// Render returns the figure's bytes in format.
func (f *Figure) Render(format string) ([]byte, error) {
	wt, err := f.WriterTo(format)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if _, err := wt.WriteTo(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// Save writes the figure to path; the format comes from the extension.
func (f *Figure) Save(path string) error {
	b, err := f.Render(strings.TrimPrefix(strings.ToLower(filepath.Ext(path)), "."))
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return os.WriteFile(path, b, 0o644)
}

package plots

import (
	"bytes"
	"fmt"
	"image/color"
	"io"
	"math"
	"path/filepath"
	"strings"
	"time"

	"codeberg.org/go-pdf/fpdf"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgpdf"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/specsim/specsim/internal/fsutil"
)

// pdfDate is the creation and modification date every figure PDF
// carries: a constant (the Unix epoch), not the time of the run, so that
// two runs write the same bytes (fpdf stamps the clock otherwise).
var pdfDate = time.Unix(0, 0).UTC()

func init() {
	fpdf.SetDefaultCreationDate(pdfDate)
	fpdf.SetDefaultModificationDate(pdfDate)
	fpdf.SetDefaultCatalogSort(true)
}

// PNGDPI is the resolution of PNG figures.
const PNGDPI = 200

// panelGap separates stacked panels; rightMargin is left blank right of
// the panels (half a tick label).
const (
	panelGap    = vg.Length(8)
	rightMargin = vg.Length(4)
)

// ColumnWidth is the width of one paper column, TextWidth of both (a
// figure* of the paper: small multiples of several settings).
const (
	ColumnWidth = 3.3 * vg.Inch
	TextWidth   = 7 * vg.Inch
)

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
	// GridCols is the number of panels side by side (default 1). With
	// GridCols > 1 the panels fill rows left to right (small multiples of
	// width Width/GridCols; a short last row keeps that width) and only
	// the legends of the panels that start a row are drawn, across the
	// whole width.
	GridCols int
	// RowSizes, when set, overrides GridCols: row i holds RowSizes[i]
	// panels (the last size repeats for further panels).
	RowSizes []int
	// RowHeights, when set, gives row i the height RowHeights[i] instead
	// of PanelHeight (rows beyond it get PanelHeight).
	RowHeights []vg.Length
	// entries[i] is the legend drawn above panel i.
	entries [][]legendEntry
}

type legendEntry struct {
	name   string
	thumbs []plot.Thumbnailer
}

// AddLegend adds a legend entry above the first panel (once per name).
func (f *Figure) AddLegend(name string, thumbs ...plot.Thumbnailer) {
	f.AddLegendTo(0, name, thumbs...)
}

// AddLegendTo adds a legend entry above panel i (once per name).
func (f *Figure) AddLegendTo(i int, name string, thumbs ...plot.Thumbnailer) {
	for len(f.entries) <= i {
		f.entries = append(f.entries, nil)
	}
	for _, e := range f.entries[i] {
		if e.name == name {
			return
		}
	}
	f.entries[i] = append(f.entries[i], legendEntry{name, thumbs})
}

// LegendNames lists the legend entries of every panel in order.
func (f *Figure) LegendNames() []string {
	var out []string
	for _, es := range f.entries {
		for _, e := range es {
			out = append(out, e.name)
		}
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
		a.Tick.Marker = cleanTicks{plot.DefaultTicks{}}
	}
	p.Title.TextStyle.Font.Size = labelSize
	p.Legend.TextStyle.Font.Size = legendSize
	return p
}

func (f *Figure) layout() (w, panelH vg.Length, cols int) {
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
	return
}

// rows returns the indices of the panels of each row.
func (f *Figure) rows() [][]int {
	var out [][]int
	for i, r := 0, 0; i < len(f.Panels); r++ {
		n := max(1, f.GridCols)
		if len(f.RowSizes) > 0 {
			n = max(1, f.RowSizes[min(r, len(f.RowSizes)-1)])
		}
		var row []int
		for ; i < len(f.Panels) && len(row) < n; i++ {
			row = append(row, i)
		}
		out = append(out, row)
	}
	return out
}

// rowHeight is the height of the panels of row r.
func (f *Figure) rowHeight(r int) vg.Length {
	if r < len(f.RowHeights) && f.RowHeights[r] > 0 {
		return f.RowHeights[r]
	}
	_, h, _ := f.layout()
	return h
}

// legendHeight is the height of the legend strip above panel i (zero
// unless panel i starts a row).
func (f *Figure) legendHeight(i int) vg.Length {
	_, _, cols := f.layout()
	if i >= len(f.entries) || len(f.entries[i]) == 0 {
		return 0
	}
	starts := false
	for _, r := range f.rows() {
		starts = starts || r[0] == i
	}
	if !starts {
		return 0
	}
	rows := (len(f.entries[i]) + cols - 1) / cols
	return vg.Length(rows)*legendRowHeight() + vg.Points(4)
}

func legendRowHeight() vg.Length {
	l := plot.NewLegend()
	l.TextStyle.Font.Size = legendSize
	return l.TextStyle.Rectangle("Xg").Max.Y + vg.Points(1.5)
}

// Draw draws the figure on c: for each row of panels, its legend strip,
// then the panels side by side.
func (f *Figure) Draw(c draw.Canvas) {
	_, _, cols := f.layout()
	top := c.Max.Y
	for ri, row := range f.rows() {
		panelH := f.rowHeight(ri)
		i0, gc := row[0], len(row)
		if ri > 0 {
			top -= panelGap
		}
		if lh := f.legendHeight(i0); lh > 0 {
			es := f.entries[i0]
			rows := (len(es) + cols - 1) / cols
			colW := (c.Max.X - c.Min.X - vg.Points(4)) / vg.Length(cols)
			for j := range cols {
				l := plot.NewLegend()
				l.TextStyle.Font.Size = legendSize
				l.Top, l.Left = true, true
				l.ThumbnailWidth = vg.Points(14)
				l.Padding = vg.Points(1.5)
				for k := j * rows; k < min((j+1)*rows, len(es)); k++ {
					l.Add(es[k].name, es[k].thumbs...)
				}
				x0 := c.Min.X + vg.Points(4) + vg.Length(j)*colW
				l.Draw(draw.Canvas{Canvas: c.Canvas, Rectangle: vg.Rectangle{
					Min: vg.Point{X: x0, Y: top - lh}, Max: vg.Point{X: x0 + colW, Y: top - vg.Points(2)}}})
			}
			top -= lh
		}
		// a margin on the right keeps the last tick label of the
		// rightmost panel inside the figure; a short last row of a grid
		// keeps the grid's panel width
		wc := gc
		if len(f.RowSizes) == 0 && f.GridCols > gc {
			wc = f.GridCols
		}
		pw := (c.Max.X - c.Min.X - rightMargin - vg.Length(wc-1)*panelGap) / vg.Length(wc)
		for j := range gc {
			x0 := c.Min.X + vg.Length(j)*(pw+panelGap)
			r := vg.Rectangle{Min: vg.Point{X: x0, Y: top - panelH}, Max: vg.Point{X: x0 + pw, Y: top}}
			guardAxes(f.Panels[i0+j])
			drawPanel(f.Panels[i0+j], draw.Canvas{Canvas: c.Canvas, Rectangle: r})
		}
		top -= panelH
	}
}

// guardAxes makes a panel's axes drawable whatever values reached its
// plotters (issue 23): gonum computes an axis's range from the data and
// replaces only infinite ends, so a NaN end made its tick search loop for
// ever, and an empty or non-positive range on a log axis panicked. A NaN
// end, or both ends non-finite, gives the range [0, 1]; on a log scale a
// range that is not positive becomes one that is (a decade below its top,
// or [0.1, 1]); a linear range is made of finite, positive width
// (spanLinear). Finite data of a representable width keep their range.
func guardAxes(p *plot.Plot) {
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		finite := func(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
		if math.IsNaN(a.Min) || math.IsNaN(a.Max) || !finite(a.Min) && !finite(a.Max) {
			a.Min, a.Max = 0, 1
		}
		if _, log := a.Scale.(plot.LogScale); log {
			if !(a.Max > 0) || !finite(a.Max) {
				a.Min, a.Max = 0.1, 1
			}
			if !(a.Min > 0) || a.Min >= a.Max { // gonum widens an empty range by ±1: below 0
				a.Min = a.Max / 10
			}
			continue
		}
		spanLinear(a)
	}
}

// spanLinear makes a linear axis drawable for any finite data (issue 30,
// H7: a metric of ±1e308 made gonum's x − min and max − min overflow to
// +Inf, and its tick search never ended): an infinite end becomes the
// largest float64 of its sign; a width of 0, or too small to tell from its
// ends (subnormals, 1e308 alone), is widened about its centre by 5% of its
// magnitude, or ±1 near 0, as gonum widens an empty range; and the axis
// normalizes through halfScale, which cannot overflow. The data keep
// their range: nothing is clipped.
func spanLinear(a *plot.Axis) {
	a.Min = math.Max(-math.MaxFloat64, math.Min(math.MaxFloat64, a.Min))
	a.Max = math.Max(-math.MaxFloat64, math.Min(math.MaxFloat64, a.Max))
	if a.Min > a.Max {
		a.Min, a.Max = a.Max, a.Min
	}
	if _, ok := a.Scale.(plot.LinearScale); ok {
		a.Scale = halfScale{}
	}
	scale := math.Max(math.Abs(a.Min), math.Abs(a.Max))
	if w := a.Max/2 - a.Min/2; w > 1e-300 && w > scale*1e-12 {
		return
	}
	c, half := a.Min/2+a.Max/2, 1.0
	if scale > 1e-280 {
		half = 0.05 * scale
	}
	a.Min, a.Max = c-half, c+half
	if math.IsInf(a.Max, 1) {
		a.Min, a.Max = math.MaxFloat64-2*half, math.MaxFloat64
	}
	if math.IsInf(a.Min, -1) {
		a.Min, a.Max = -math.MaxFloat64, -math.MaxFloat64+2*half
	}
}

// halfScale is gonum's linear scale computed on halves, (x/2 − min/2) /
// (max/2 − min/2), so that no difference of finite values overflows; a
// position far outside the axis (or of an infinite x) is held to [-10, 11]
// of the axis, off the panel, so the rasterizer never gets an infinite
// coordinate.
type halfScale struct{}

// Normalize implements plot.Normalizer.
func (halfScale) Normalize(min, max, x float64) float64 {
	v := (x/2 - min/2) / (max/2 - min/2)
	if math.IsNaN(v) {
		return -10
	}
	return math.Max(-10, math.Min(11, v))
}

// Size returns the figure's width and height.
func (f *Figure) Size() (w, h vg.Length) {
	w, _, _ = f.layout()
	rows := len(f.rows())
	for r := range rows {
		h += f.rowHeight(r)
	}
	h += vg.Length(max(0, rows-1)) * panelGap
	for i := range f.Panels {
		h += f.legendHeight(i)
	}
	return w, h
}

// WriterTo renders the figure in format png (PNGDPI), svg or pdf. SVG and
// PDF are vector: the SVG embeds the TrueType font (Liberation, which has
// Greek) and keeps text as text; the PDF draws text as the font's glyph
// outlines (outlinePDF), because gonum's PDF font encoding (code page
// 1252) has no Greek letters.
func (f *Figure) WriterTo(format string) (io.WriterTo, error) {
	w, h := f.Size()
	switch format {
	case "png":
		return vgimg.PngCanvas{Canvas: f.raster(PNGDPI)}, nil
	case "svg":
		c := vgsvg.NewWith(vgsvg.UseWH(w, h), vgsvg.EmbedFonts(true))
		f.Draw(draw.New(c))
		return c, nil
	case "pdf":
		c := &outlinePDF{Canvas: vgpdf.New(w, h)}
		f.Draw(draw.New(c))
		return c.Canvas, nil
	}
	return nil, fmt.Errorf("figure format %q; use png, svg or pdf", format)
}

// raster draws the figure on an opaque white image at dpi.
func (f *Figure) raster(dpi int) *vgimg.Canvas {
	w, h := f.Size()
	c := vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(dpi))
	dc := draw.New(c)
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	f.Draw(dc)
	return c
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
	return fsutil.WriteBytes(path, b, 0o644)
}

// drawPanel draws p on c. gonum places a log axis' label, for the padding
// it computes, at the data midpoint's position ((min+max)/2 in data, near
// the axis' far end on a log scale), and so shrinks a log-x panel
// sideways and a log-y panel from the top to make room for a label that
// is not drawn there. drawPanel draws such labels itself, centred on the
// data area, in the room the axis would have taken.
func drawPanel(p *plot.Plot, c draw.Canvas) {
	_, logX := p.X.Scale.(plot.LogScale)
	_, logY := p.Y.Scale.(plot.LogScale)
	xl, yl := p.X.Label, p.Y.Label
	if !(logX && xl.Text != "") && !(logY && yl.Text != "") {
		p.Draw(c)
		return
	}
	sub := c
	if logX && xl.Text != "" {
		sub.Min.Y += xl.TextStyle.Height(xl.Text) + xl.Padding
		p.X.Label.Text = ""
	} else {
		logX = false
	}
	if logY && yl.Text != "" {
		sub.Min.X += yl.TextStyle.Height(yl.Text) + yl.TextStyle.FontExtents().Descent + yl.Padding
		p.Y.Label.Text = ""
	} else {
		logY = false
	}
	defer func() { p.X.Label.Text, p.Y.Label.Text = xl.Text, yl.Text }()
	p.Draw(sub)
	data := p.DataCanvas(sub)
	if logX {
		c.FillText(xl.TextStyle, vg.Point{X: data.Center().X, Y: c.Min.Y + xl.TextStyle.FontExtents().Descent}, xl.Text)
	}
	if logY {
		sty := yl.TextStyle
		sty.Rotation += math.Pi / 2
		c.FillText(sty, vg.Point{X: c.Min.X + yl.TextStyle.Height(yl.Text) - yl.TextStyle.FontExtents().Descent, Y: data.Center().Y}, yl.Text)
	}
}

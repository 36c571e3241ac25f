package plots

import (
	"bytes"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
)

// bandFigure is one panel with a wide translucent band over a line: the
// case where PDF and PNG drifted apart (a premultiplied colour written
// with an alpha state drew the band dark grey in the PDF).
func bandFigure() *Figure {
	p := newPanel("x", "y")
	lo := plotter.XYs{{X: 0, Y: 0}, {X: 1, Y: 0.2}, {X: 2, Y: 0.1}}
	hi := plotter.XYs{{X: 0, Y: 0.8}, {X: 1, Y: 1}, {X: 2, Y: 0.9}}
	mid := plotter.XYs{{X: 0, Y: 0.4}, {X: 1, Y: 0.6}, {X: 2, Y: 0.5}}
	c := StyleOf("token").Color
	p.Add(band(lo, hi, c), line(mid, c, nil))
	f := &Figure{Name: "band", Panels: []*plot.Plot{p}}
	f.AddLegend("token", line(nil, c, nil))
	return f
}

// meanAbsDiff is the mean absolute difference of two images' RGB
// channels, in levels of 255, over their common rectangle.
func meanAbsDiff(a, b image.Image) float64 {
	r := a.Bounds().Intersect(b.Bounds())
	var sum float64
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			r1, g1, b1, _ := a.At(x, y).RGBA()
			r2, g2, b2, _ := b.At(x, y).RGBA()
			for _, d := range []int{int(r1>>8) - int(r2>>8), int(g1>>8) - int(g2>>8), int(b1>>8) - int(b2>>8)} {
				sum += float64(max(d, -d))
			}
		}
	}
	return sum / float64(3*r.Dx()*r.Dy())
}

// pdfPNGTolerance bounds the mean absolute RGB difference between a
// figure's PNG and its PDF rasterised at the same resolution: anti-aliasing
// of text and edges differs by a level or two; the dark band made them differ by
// over 11 levels on average over this figure (1 with straight alpha).
const pdfPNGTolerance = 3

// The PDF of a figure looks like its PNG: rasterised by pdftoppm at the
// PNG's resolution, the two differ by anti-aliasing only. Skipped where
// pdftoppm (poppler-utils) is missing.
func TestPDFLooksLikePNG(t *testing.T) {
	if _, err := exec.LookPath("pdftoppm"); err != nil {
		t.Skip("pdftoppm is not installed (apt-get install poppler-utils)")
	}
	for _, f := range []*Figure{bandFigure()} {
		pngBytes, err := f.Render("png")
		if err != nil {
			t.Fatal(err)
		}
		want, err := png.Decode(bytes.NewReader(pngBytes))
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		pdf := filepath.Join(dir, f.Name+".pdf")
		if err := f.Save(pdf); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, "r")
		if b, err := exec.Command("pdftoppm", "-r", "200", "-png", "-singlefile", pdf, out).CombinedOutput(); err != nil {
			t.Fatalf("pdftoppm: %v\n%s", err, b)
		}
		rb, err := os.ReadFile(out + ".png")
		if err != nil {
			t.Fatal(err)
		}
		got, err := png.Decode(bytes.NewReader(rb))
		if err != nil {
			t.Fatal(err)
		}
		if dw, dh := got.Bounds().Dx()-want.Bounds().Dx(), got.Bounds().Dy()-want.Bounds().Dy(); max(dw, -dw) > 1 || max(dh, -dh) > 1 {
			t.Fatalf("%s: PDF rasterised to %v, PNG is %v", f.Name, got.Bounds(), want.Bounds())
		}
		if d := meanAbsDiff(got, want); d > pdfPNGTolerance {
			t.Errorf("%s: PDF and PNG differ by %.2f levels on average (tolerance %d)", f.Name, d, pdfPNGTolerance)
		} else {
			t.Logf("%s: mean difference %.2f levels", f.Name, d)
		}
	}
}

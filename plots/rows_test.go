package plots_test

// The tests that draw figures from real rows, computed by package
// experiments: an internal test importing it would be an import cycle
// (experiments declares its figures with this package).

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/cmpimg"

	"github.com/specsim/specsim/experiments"
	"github.com/specsim/specsim/plots"
	"github.com/specsim/specsim/table"
)

// regen is cmpimg's -regen flag: 'go test ./plots -regen' rewrites the
// golden images in testdata/.
var regen = cmpimg.GenerateTestData

// goldenTolerance is cmpimg.EqualApprox's normalised delta: it absorbs
// anti-aliasing differences between platforms, not a moved curve.
const goldenTolerance = 0.05

func rowsOf(t *testing.T, name string) []table.Row {
	t.Helper()
	e, err := experiments.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := experiments.RunAll(context.Background(), e, experiments.Config{Seed: 1, Workers: 1, Scale: 1})
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// checkGolden compares the PNG of f with testdata/NAME_golden.png.
func checkGolden(t *testing.T, f *plots.Figure) {
	t.Helper()
	got, err := f.Render("png")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", f.Name+"_golden.png")
	if *regen {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v; run 'go test ./plots -regen' to create it", err)
	}
	ok, err := cmpimg.EqualApprox("png", got, want, goldenTolerance)
	if err != nil {
		t.Fatal(err)
	}
	if !ok {
		bad := filepath.Join(t.TempDir(), f.Name+".png")
		_ = os.WriteFile(bad, got, 0o644)
		t.Errorf("%s differs from %s beyond tolerance %g (got: %s); if the change is intended, run 'go test ./plots -regen' and look at the image", f.Name, path, goldenTolerance, bad)
	}
}

// The leviathan figures come from closed forms and exact enumeration, so
// their images are fixed.
func TestGoldenTokens(t *testing.T) {
	f, err := plots.Tokens(rowsOf(t, "leviathan-tokens"))
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, f)
}

func TestGoldenWalltime(t *testing.T) {
	rows := rowsOf(t, "leviathan-walltime")
	f, err := plots.Walltime(rows, 0.8)
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, f)
	// the marked best γ at α = 0.8, c = 0.05 is Leviathan's Thm 3.8
	// optimum over γ = 1..16 (algos.BestGamma; 8 by direct evaluation).
	best := table.Where(rows, func(r table.Row) bool {
		return r.String("alpha") == "0.8" && r.String("c") == "0.05" && r.String("is_best") == "true"
	})
	if len(best) != 1 || best[0].String("gamma") != "8" {
		t.Errorf("best γ at α = 0.8, c = 0.05: %v, want one row with γ = 8", best)
	}
	// At α = 0.9, c = 0.01 the grid's best is its edge, γ = 16, and the
	// optimum is γ = 24 (S = 7.49 against 7.18 at 16, by direct
	// evaluation of Thm 3.8): the figure flags it and says where.
	f9, err := plots.Walltime(rows, 0.9)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(f9.LegendNames(), "best at the grid's edge") || !strings.Contains(f9.Caption, "c = 0.01: best γ = 24, S = 7.49") {
		t.Errorf("α = 0.9: legend %v, caption %q: the edge optimum (γ = 24 at c = 0.01) is not flagged", f9.LegendNames(), f9.Caption)
	}
	if slices.Contains(f.LegendNames(), "best at the grid's edge") {
		t.Error("α = 0.8 flags an edge optimum, but every best γ lies inside the grid")
	}
}

// A golden image that a changed figure would not fail is no guard: a
// figure with one curve removed must differ beyond the tolerance.
func TestGoldenDetectsChange(t *testing.T) {
	rows := table.Where(rowsOf(t, "leviathan-tokens"), func(r table.Row) bool { return r.String("alpha") != "0.9" })
	f, err := plots.Tokens(rows)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := f.Render("png")
	want, err := os.ReadFile(filepath.Join("testdata", "leviathan-tokens_golden.png"))
	if err != nil {
		t.Skip("no golden yet")
	}
	if ok, _ := cmpimg.EqualApprox("png", got, want, goldenTolerance); ok {
		t.Error("removing the α = 0.9 curve passes the golden comparison; the tolerance is too loose")
	}
}

func TestFiguresNeedTheirColumns(t *testing.T) {
	_, err := plots.Tokens(nil)
	if err == nil || !strings.Contains(err.Error(), "simulate run leviathan-tokens") {
		t.Errorf("no rows: err = %v, want one naming the command", err)
	}
	_, err = plots.Multidraft(rowsOf(t, "leviathan-tokens"), "x", nil, nil)
	if err == nil || !strings.Contains(err.Error(), "no column") {
		t.Errorf("wrong table: err = %v, want one naming the missing column", err)
	}
}

// Every format renders, and the figure's height grows with its legend.
func TestFormats(t *testing.T) {
	f, err := plots.Tokens(rowsOf(t, "leviathan-tokens"))
	if err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"png", "svg", "pdf"} {
		b, err := f.Render(format)
		if err != nil || len(b) < 1000 {
			t.Errorf("%s: %d bytes, err %v", format, len(b), err)
		}
	}
	if _, err := f.Render("gif"); err == nil {
		t.Error("gif: no error")
	}
	w, h := f.Size()
	if w != plots.ColumnWidth || h <= f.PanelHeight {
		t.Errorf("size %v × %v", w, h)
	}
	if got := strings.Join(f.LegendNames(), ","); got != "α = 0.9,α = 0.8,α = 0.7,α = 0.6,α = 0.5,Eq. 1,exact (token)" {
		t.Errorf("legend %s", got)
	}
}

// PDF figures are vector: no embedded image and no font (text is drawn
// as glyph outlines), and the Greek of the labels is drawn, not dropped:
// the PDF of a figure labelled γ holds the outline of γ.
func TestPDFIsVector(t *testing.T) {
	f, err := plots.Tokens(rowsOf(t, "leviathan-tokens"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := f.Render("pdf")
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"/Subtype /Image", "/Type /Font", "/FontFile"} {
		if strings.Contains(string(b), bad) {
			t.Errorf("the PDF holds %s; want paths only", bad)
		}
	}
	// the same figure without its Greek letters draws fewer paths: the
	// letters are there
	g := *f
	g.Panels = nil
	p := plots.NewPanel("draft length γγγγγγγγ (tokens)", "E")
	g.Panels = append(g.Panels, p)
	h := g
	q := plots.NewPanel("draft length (tokens)", "E")
	h.Panels = []*plot.Plot{q}
	bg, _ := g.Render("pdf")
	bh, _ := h.Render("pdf")
	if len(bg) <= len(bh) {
		t.Errorf("a label with γ renders to %d bytes, without it %d: γ is not drawn", len(bg), len(bh))
	}
}

// No data point lies on or outside a panel's x range: markers at the
// ends would be cut in half by the panel's edge.
func TestNoClippedMarkers(t *testing.T) {
	rows := rowsOf(t, "leviathan-tokens")
	f, err := plots.Tokens(rows)
	if err != nil {
		t.Fatal(err)
	}
	gs := table.Distinct(rows, "gamma")
	p := f.Panels[0]
	if !(p.X.Min < gs[0] && gs[len(gs)-1] < p.X.Max) {
		t.Errorf("γ in [%g, %g], axis [%g, %g]", gs[0], gs[len(gs)-1], p.X.Min, p.X.Max)
	}
}

// The multidraft figure's curves (the bounds and every rule the
// experiment compares) differ in colour at a glance.
func TestMultidraftColoursDistinct(t *testing.T) {
	names := append([]string{"bound-iid", "bound-wor"}, experiments.MultidraftRules...)
	for i, a := range names {
		for _, b := range names[i+1:] {
			if d := plots.ColourDistance(plots.StyleOf(a).Color, plots.StyleOf(b).Color); d < plots.MinSameFigure {
				t.Errorf("figure multidraft: %s and %s differ by ΔE00 = %.1f < %d", a, b, d, plots.MinSameFigure)
			}
		}
	}
}

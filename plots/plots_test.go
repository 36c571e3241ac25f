package plots

import (
	"context"
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/cmpimg"

	"github.com/specsim/specsim/algos"
	"github.com/specsim/specsim/experiments"
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
func checkGolden(t *testing.T, f *Figure) {
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
	f, err := Tokens(rowsOf(t, "leviathan-tokens"))
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, f)
}

func TestGoldenWalltime(t *testing.T) {
	rows := rowsOf(t, "leviathan-walltime")
	f, err := Walltime(rows, 0.8)
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
}

// A golden image that a changed figure would not fail is no guard: a
// figure with one curve removed must differ beyond the tolerance.
func TestGoldenDetectsChange(t *testing.T) {
	rows := table.Where(rowsOf(t, "leviathan-tokens"), func(r table.Row) bool { return r.String("alpha") != "0.9" })
	f, err := Tokens(rows)
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

// Every algorithm in a family that shares a figure has a distinct colour
// or marker, and the style of a name never changes.
func TestStylesDistinct(t *testing.T) {
	families := [][]string{
		{"token", "block", "token-nobonus", "greedy", "exact-match", "lenience", "mentored"},
		{"mentored", "lenience", "lenience-residual-p", "typical", "cascade-chow", "cascade-diff", "cascade-opt", "fuzzy"},
		{"specinfer", "rrs-wor", "kseq", "target-only", "greedy-draft", "shared-uniform", "best-candidate", "naive"},
	}
	for _, fam := range families {
		seen := map[string]string{}
		for _, name := range fam {
			s := StyleOf(name)
			key := fmt.Sprintf("%v/%T", s.Color, s.Shape)
			if prev, dup := seen[key]; dup {
				t.Errorf("%s and %s share colour and marker %s", prev, name, key)
			}
			seen[key] = name
		}
	}
	if a, b := StyleOf("some-new-rule"), StyleOf("some-new-rule"); a.Color != b.Color || a.Shape != b.Shape {
		t.Error("a name without a fixed style gets different styles")
	}
	// Every registered rule, with a fixed style or an automatic one, has
	// its own colour and marker, and none takes a reference curve's.
	seen := map[string]string{}
	for _, name := range []string{"eq1", "bound-iid", "bound-wor"} {
		seen[styleKey(StyleOf(name))] = name
	}
	for _, name := range append(algos.Names(), algos.TreeNames()...) {
		key := styleKey(StyleOf(name))
		if prev, dup := seen[key]; dup {
			t.Errorf("%s and %s share colour and marker %s", prev, name, key)
		}
		seen[key] = name
	}
}

func TestFiguresNeedTheirColumns(t *testing.T) {
	_, err := Tokens(nil)
	if err == nil || !strings.Contains(err.Error(), "simulate run leviathan-tokens") {
		t.Errorf("no rows: err = %v, want one naming the command", err)
	}
	_, err = Multidraft(rowsOf(t, "leviathan-tokens"), "x", nil, nil)
	if err == nil || !strings.Contains(err.Error(), "no column") {
		t.Errorf("wrong table: err = %v, want one naming the missing column", err)
	}
}

// Every format renders, and the figure's height grows with its legend.
func TestFormats(t *testing.T) {
	f, err := Tokens(rowsOf(t, "leviathan-tokens"))
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
	if w != ColumnWidth || h <= f.PanelHeight {
		t.Errorf("size %v × %v", w, h)
	}
	if got := strings.Join(f.LegendNames(), ","); got != "α = 0.9,α = 0.8,α = 0.7,α = 0.6,α = 0.5,Eq. 1,exact (token)" {
		t.Errorf("legend %s", got)
	}
}

// CIEDE2000 against the test data of Sharma, Wu and Dalal (2005), Table 1
// (pairs 1, 7, 17, 25 and 33), to the four decimals published.
func TestDeltaE2000(t *testing.T) {
	for _, c := range []struct{ l1, a1, b1, l2, a2, b2, want float64 }{
		{50, 2.6772, -79.7751, 50, 0, -82.7485, 2.0425},
		{50, 0, 0, 50, -1, 2, 2.3669},
		{50, 2.5, 0, 73, 25, -18, 27.1492},
		{60.2574, -34.0099, 36.2677, 60.4626, -34.1751, 39.4387, 1.2644},
		{2.0776, 0.0795, -1.1350, 0.9033, -0.0636, -0.5514, 0.9082},
	} {
		if got := DeltaE2000(c.l1, c.a1, c.b1, c.l2, c.a2, c.b2); math.Abs(got-c.want) > 5e-5 {
			t.Errorf("ΔE00(%v, %v, %v; %v, %v, %v) = %.5f, want %.4f", c.l1, c.a1, c.b1, c.l2, c.a2, c.b2, got, c.want)
		}
	}
	// sRGB white is L* = 100, a* = b* = 0 under D65
	if l, a, b := Lab(color.White); math.Abs(l-100) > 1e-3 || math.Abs(a) > 1e-2 || math.Abs(b) > 1e-2 {
		t.Errorf("Lab(white) = %v, %v, %v", l, a, b)
	}
}

// Colour thresholds in CIEDE2000: styles drawn in one figure must differ
// at a glance (minSameFigure); any two named styles, which a user's own
// sweep or a notebook may put side by side, must not be mistaken for one
// another (minAnyPair; about 2.3 is the just noticeable difference).
const (
	minSameFigure = 20
	minAnyPair    = 10
)

// figureFamilies are the named styles each figure draws together.
var figureFamilies = map[string][]string{
	"block-vs-token": {"token", "block"},
	"lossy-frontier": {"mentored", "lenience", "lenience-residual-p", "typical", "cascade-chow", "cascade-diff", "cascade-opt", "fuzzy"},
	"multidraft":     append([]string{"bound-iid", "bound-wor"}, experiments.MultidraftRules...),
	"replay":         {"token", "token-nobonus", "block", "exact-match", "greedy", "lenience", "mentored"},
	"fms-scenarios":  {"naive", "shared-uniform", "best-candidate"},
}

// Every pair of styles in one figure, and every pair of named rule styles
// anywhere, is far enough apart in colour; the failures are listed with
// their ΔE00 so a palette fix can be checked against the same numbers.
func TestStyleColoursDistinct(t *testing.T) {
	for fig, names := range figureFamilies {
		for i, a := range names {
			for _, b := range names[i+1:] {
				if d := ColourDistance(StyleOf(a).Color, StyleOf(b).Color); d < minSameFigure {
					t.Errorf("figure %s: %s and %s differ by ΔE00 = %.1f < %d", fig, a, b, d, minSameFigure)
				}
			}
		}
	}
	var rules []string
	for name, s := range algoStyles {
		if s.Dashes == nil { // reference curves are told apart by their dashes
			rules = append(rules, name)
		}
	}
	sort.Strings(rules)
	for i, a := range rules {
		for _, b := range rules[i+1:] {
			if d := ColourDistance(StyleOf(a).Color, StyleOf(b).Color); d < minAnyPair {
				t.Errorf("%s and %s differ by ΔE00 = %.1f < %d", a, b, d, minAnyPair)
			}
		}
	}
}

// PDF figures are vector: no embedded image and no font (text is drawn
// as glyph outlines), and the Greek of the labels is drawn, not dropped:
// the PDF of a figure labelled γ holds the outline of γ.
func TestPDFIsVector(t *testing.T) {
	f, err := Tokens(rowsOf(t, "leviathan-tokens"))
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
	p := newPanel("draft length γγγγγγγγ (tokens)", "E")
	g.Panels = append(g.Panels, p)
	h := g
	q := newPanel("draft length (tokens)", "E")
	h.Panels = []*plot.Plot{q}
	bg, _ := g.Render("pdf")
	bh, _ := h.Render("pdf")
	if len(bg) <= len(bh) {
		t.Errorf("a label with γ renders to %d bytes, without it %d: γ is not drawn", len(bg), len(bh))
	}
}

// Every character of every label and legend the figures draw has a glyph
// in the figure font (otherwise it is drawn as an empty box).
func TestGlyphsCovered(t *testing.T) {
	p := newPanel("", "")
	face := p.TextHandler.Cache().Lookup(p.X.Label.TextStyle.Font, p.X.Label.TextStyle.Font.Size)
	texts := []string{"draft length γ (tokens)", "α = 0.9", "β = Σ min(p, q)", "KL(p‖π) (nats)", "α* i.i.d.", "×5", "E[emitted per step]", "walltime improvement (×)", "−0.5"}
	for _, s := range texts {
		if miss := missingGlyphs(face, s); len(miss) > 0 {
			t.Errorf("%q: no glyph for %q in %s", s, string(miss), face.Name())
		}
	}
	if miss := missingGlyphs(face, "\u4e00"); len(miss) != 1 {
		t.Error("missingGlyphs finds no gap in a font without CJK")
	}
}

// No data point lies on or outside a panel's x range: markers at the
// ends would be cut in half by the panel's edge.
func TestNoClippedMarkers(t *testing.T) {
	rows := rowsOf(t, "leviathan-tokens")
	f, err := Tokens(rows)
	if err != nil {
		t.Fatal(err)
	}
	gs := table.Distinct(rows, "gamma")
	p := f.Panels[0]
	if !(p.X.Min < gs[0] && gs[len(gs)-1] < p.X.Max) {
		t.Errorf("γ in [%g, %g], axis [%g, %g]", gs[0], gs[len(gs)-1], p.X.Min, p.X.Max)
	}
}

// The lossy frontier draws one panel per lossy rule with a finite KL, puts
// KL = 0 (and its round-off) in a column labelled "0" left of the log
// axis, and draws coincident settings once, counted.
func TestLossyFrontierSmallMultiples(t *testing.T) {
	row := func(rule string, kl, acc float64) table.Row {
		return table.Row{{K: "source", V: "dirichlet"}, {K: "V", V: int64(10)}, {K: "quality", V: 0.5},
			{K: "rule", V: rule}, {K: "acceptance", V: acc}, {K: "kl", V: kl}}
	}
	rows := []table.Row{
		row("mentored", 2e-16, 0.5), row("mentored", 0.01, 0.6), row("mentored", 0.5, 1),
		row("fuzzy", 0, 0.5), row("fuzzy", 3e-16, 0.5), row("fuzzy", 0.5, 1), row("fuzzy", 0.5, 1), row("fuzzy", 0.5, 1),
		row("lenience", 0.02, 0.55),
		row("typical", math.Inf(1), 0.9),
	}
	f, err := LossyFrontier(rows, "dirichlet", 10, 0.5)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Panels) != 2 || f.Panels[0].Title.Text != "fuzzy" || f.Panels[1].Title.Text != "lenience" {
		t.Fatalf("panels %d, want fuzzy and lenience", len(f.Panels))
	}
	if !strings.Contains(f.Caption, "Not drawn: typical") {
		t.Errorf("caption does not name the rule with infinite KL: %s", f.Caption)
	}
	p := f.Panels[0]
	ts := p.X.Tick.Marker.Ticks(p.X.Min, p.X.Max)
	if ts[0].Label != "0" || !(ts[0].Value > p.X.Min && ts[0].Value < 0.01) {
		t.Errorf("first tick %+v on [%g, %g], want the KL = 0 column labelled 0", ts[0], p.X.Min, p.X.Max)
	}
	uniq, n := coincide(xyAt(table.Where(rows, table.Eq("rule", "fuzzy")), func(kl float64) float64 {
		if kl < klZero {
			return 0
		}
		return kl
	}))
	if len(uniq) != 2 || n[0] != 2 || n[1] != 3 {
		t.Errorf("coincident fuzzy settings: %v %v, want 2 points counted 2 and 3", uniq, n)
	}
	if _, err := f.Render("png"); err != nil {
		t.Fatal(err)
	}
}

// The replay draws one histogram panel per draft position, then the rules'
// panel, whose labels mark the rules whose losslessness test rejects.
func TestReplayPanels(t *testing.T) {
	var rows []table.Row
	for pos := int64(1); pos <= 3; pos++ {
		for _, a := range []float64{0.1, 0.5, 0.52, 0.9} {
			rows = append(rows, table.Row{{K: "kind", V: "alpha"}, {K: "position", V: pos}, {K: "alpha", V: a}})
		}
	}
	rule := func(name, verdict string, v float64) table.Row {
		return table.Row{{K: "kind", V: "rule"}, {K: "algorithm", V: name}, {K: "mean_emitted_exact", V: v},
			{K: "ci_lo", V: v - 0.01}, {K: "ci_hi", V: v + 0.01}, {K: "lossless_verdict", V: verdict}}
	}
	rows = append(rows, rule("token", "consistent", 1.7), rule("lenience", "violated", 2.1))
	f, err := Replay(rows)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Panels) != 4 || f.Panels[2].Title.Text != "position 3" {
		t.Fatalf("%d panels, want 3 histograms and the rules' panel", len(f.Panels))
	}
	if got := fmt.Sprint(f.rows()); got != "[[0 1] [2] [3]]" {
		t.Errorf("rows %s, want two histograms, the third alone, then the rules", got)
	}
	ts := f.Panels[3].Y.Tick.Marker.Ticks(f.Panels[3].Y.Min, f.Panels[3].Y.Max)
	var labels []string
	for _, tk := range ts {
		labels = append(labels, tk.Label)
	}
	if got := strings.Join(labels, ","); got != "token,lenience (lossy)" {
		t.Errorf("rule labels %q", got)
	}
	if _, err := f.Render("pdf"); err != nil {
		t.Fatal(err)
	}
}

// TestMultidraftShowsThePair: the caption writes the pair's root rows, so
// a reader sees the distributions the curves are about.
func TestMultidraftShowsThePair(t *testing.T) {
	rows := []table.Row{}
	for _, k := range []int64{1, 2} {
		rows = append(rows, table.Row{{K: "pair", V: "toy"}, {K: "k", V: k}, {K: "verifier", V: "specinfer"},
			{K: "acceptance", V: 0.5 * float64(k)}, {K: "bound_iid", V: 0.6}, {K: "bound_wor", V: 0.7}})
	}
	f, err := Multidraft(rows, "toy", []float64{0.5, 0.25, 0.25}, []float64{1.0 / 3, 1.0 / 3, 1.0 / 3})
	if err != nil {
		t.Fatal(err)
	}
	if want := "toy pair (p = (0.5, 0.25, 0.25), q = (0.333, 0.333, 0.333))"; !strings.Contains(f.Caption, want) {
		t.Errorf("caption %q does not hold %q", f.Caption, want)
	}
}

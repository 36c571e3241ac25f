package plots

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/plot/cmpimg"

	"github.com/specsim/specsim/algos"
	"github.com/specsim/specsim/experiments"
)

// regen is cmpimg's -regen flag: 'go test ./plots -regen' rewrites the
// golden images in testdata/.
var regen = cmpimg.GenerateTestData

// goldenTolerance is cmpimg.EqualApprox's normalised delta: it absorbs
// anti-aliasing differences between platforms, not a moved curve.
const goldenTolerance = 0.05

func rowsOf(t *testing.T, name string) []experiments.Row {
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
	best := where(rows, func(r experiments.Row) bool {
		return r.String("alpha") == "0.8" && r.String("c") == "0.05" && r.String("is_best") == "true"
	})
	if len(best) != 1 || best[0].String("gamma") != "8" {
		t.Errorf("best γ at α = 0.8, c = 0.05: %v, want one row with γ = 8", best)
	}
}

// A golden image that a changed figure would not fail is no guard: a
// figure with one curve removed must differ beyond the tolerance.
func TestGoldenDetectsChange(t *testing.T) {
	rows := where(rowsOf(t, "leviathan-tokens"), func(r experiments.Row) bool { return r.String("alpha") != "0.9" })
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
	_, err = Multidraft(rowsOf(t, "leviathan-tokens"), "x")
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

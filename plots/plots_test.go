package plots

import (
	"fmt"
	"image/color"
	"math"
	"sort"
	"strings"
	"testing"

	"github.com/specsim/specsim/algos"
	"github.com/specsim/specsim/table"
)

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

// figureFamilies are the named styles each figure draws together.
var figureFamilies = map[string][]string{
	"block-vs-token": {"token", "block"},
	"lossy-frontier": {"mentored", "lenience", "lenience-residual-p", "typical", "cascade-chow", "cascade-diff", "cascade-opt", "fuzzy"},
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

// Every character of every label and legend the figures draw has a glyph
// in the figure font (otherwise it is drawn as an empty box).
func TestGlyphsCovered(t *testing.T) {
	p := newPanel("", "")
	face := p.TextHandler.Cache().Lookup(p.X.Label.TextStyle.Font, p.X.Label.TextStyle.Font.Size)
	texts := []string{"draft length γ (tokens)", "α = 0.9", "β = Σ min(p, q)", "KL(p‖π) (nats)", "α* i.i.d.", "×5", "E[emitted per step]", "walltime improvement (×)", "−0.5", "CPU µs per step"}
	for _, s := range texts {
		if miss := missingGlyphs(face, s); len(miss) > 0 {
			t.Errorf("%q: no glyph for %q in %s", s, string(miss), face.Name())
		}
	}
	if miss := missingGlyphs(face, "\u4e00"); len(miss) != 1 {
		t.Error("missingGlyphs finds no gap in a font without CJK")
	}
}

// The lossy frontier draws one panel per lossy rule with a finite KL
// (mentored first), under the frontier's rows, puts KL = 0 (and its
// round-off) in a column labelled "0" left of the log axis, and draws
// coincident settings once, counted.
func TestLossyFrontierSmallMultiples(t *testing.T) {
	row := func(rule string, kl, acc float64) table.Row {
		kind := "rule"
		if rule == "frontier" {
			kind = "frontier"
		}
		return table.Row{{K: "source", V: "dirichlet"}, {K: "V", V: int64(10)}, {K: "quality", V: 0.5}, {K: "kind", V: kind},
			{K: "rule", V: rule}, {K: "acceptance", V: acc}, {K: "kl", V: kl}}
	}
	rows := []table.Row{
		row("frontier", 0, 0.5), row("frontier", 0.01, 0.62), row("frontier", 0.5, 1),
		row("mentored", 2e-16, 0.5), row("mentored", 0.01, 0.6), row("mentored", 0.5, 1),
		row("fuzzy", 0, 0.5), row("fuzzy", 3e-16, 0.5), row("fuzzy", 0.5, 1), row("fuzzy", 0.5, 1), row("fuzzy", 0.5, 1),
		row("lenience", 0.02, 0.55),
		row("typical", math.Inf(1), 0.9),
	}
	f, err := LossyFrontier(rows, "dirichlet", 10, 0.5)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Panels) != 3 || f.Panels[0].Title.Text != "mentored (one D everywhere)" || f.Panels[1].Title.Text != "fuzzy" || f.Panels[2].Title.Text != "lenience" {
		t.Fatalf("%d panels, want mentored, fuzzy and lenience", len(f.Panels))
	}
	for _, pr := range f.Problems() {
		t.Error(pr)
	}
	if _, err := LossyFrontier(rows[3:], "dirichlet", 10, 0.5); err == nil {
		t.Error("no frontier rows: no error")
	}
	if !strings.Contains(f.Caption, "Not drawn: typical") {
		t.Errorf("caption does not name the rule with infinite KL: %s", f.Caption)
	}
	p := f.Panels[1]
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

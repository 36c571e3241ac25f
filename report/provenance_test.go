package report

import (
	"strings"
	"testing"

	"github.com/specsim/specsim/data/results"
)

// ProvenanceOf reads the revisions, seed and scale of the main job's
// tables; TeX shortens revisions to 12 hex digits (keeping +dirty), says
// n/a where the tables disagree, and writes the command with -{}- so that
// LaTeX sets two hyphens.
func TestProvenance(t *testing.T) {
	meta := func(rev, seed, spec string) results.Meta {
		return results.Meta{results.KeyGitRevision: rev, results.KeySeed: seed, results.KeySpec: spec}
	}
	const h = "18d6fa7b2063db70a6f1477bb97447f67f892612"
	b := &Bundle{Meta: map[string]results.Meta{
		"leviathan-table1": meta(h+"+dirty", "7", `{"experiment":"leviathan-table1","scale":0.5}`),
		"audit":            meta(h+"+dirty", "7", `{"experiment":"audit","scale":0.5}`),
		"not-main":         meta("ffffffffffff", "9", `{"scale":3}`),
	}}
	p := ProvenanceOf(b)
	if len(p.Revisions) != 1 || p.Revisions[0] != h+"+dirty" || p.Seed != "7" || p.Scale != "0.5" {
		t.Fatalf("ProvenanceOf = %+v", p)
	}
	if p.Date != "" {
		t.Errorf("a dirty revision has no commit date: %q", p.Date)
	}
	if c := p.Command(); c != "report reproduce --seed 7 --scale 0.5" {
		t.Errorf("Command() = %q", c)
	}
	tex := p.TeX()
	for _, want := range []string{`\newcommand{\SpecsimRevision}{18d6fa7b2063+dirty}`,
		`\newcommand{\SpecsimCommand}{\texttt{report reproduce -{}-seed 7 -{}-scale 0.5}}`, `\newcommand{\SpecsimDate}{}`} {
		if !strings.Contains(tex, want) {
			t.Errorf("TeX() lacks %s:\n%s", want, tex)
		}
	}

	b.Meta["audit"] = meta("abc1234,"+h, "7", `{"experiment":"audit"}`)
	p = ProvenanceOf(b)
	if len(p.Revisions) != 3 || p.Scale != "n/a" {
		t.Errorf("mixed runs: %+v, want three revisions and scale n/a", p)
	}
	// issue 30: no reproduce command with an n/a (or missing) seed or
	// scale, whichever way the tables disagree
	for _, m := range []results.Meta{
		meta(h, "7", `{"experiment":"audit","scale":2}`), meta(h, "8", `{"experiment":"audit","scale":0.5}`),
		meta(h, "", `{"experiment":"audit","scale":0.5}`), meta(h, "7", `not json`),
	} {
		b.Meta["audit"] = m
		if c := ProvenanceOf(b).Command(); strings.Contains(c, "--seed") || strings.Contains(c, "--scale") || !strings.HasPrefix(c, "n/a") {
			t.Errorf("tables that disagree (%v): Command() = %q", m, c)
		}
	}
	b.Meta["audit"] = meta(`x}\input{evil`, "7", `{"scale":0.5}`)
	if tex := ProvenanceOf(b).TeX(); strings.Contains(tex, "evil") {
		t.Errorf("a revision that is not one reached the TeX:\n%s", tex)
	}
}

package report

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/specsim/specsim/data/results"
	"github.com/specsim/specsim/internal/escape"
	"github.com/specsim/specsim/internal/fsutil"
	"github.com/specsim/specsim/internal/memcap"
	"github.com/specsim/specsim/table"
)

// FuzzResultsMeta: a results table's metadata is data. For any experiment
// name, seed, revision, spec and column names, the bundle takes only a
// name that is a plain file name joined under --out, report.md holds no
// raw HTML or Markdown link from the metadata, no generated .tex file
// (numbers.tex, provenance.tex, every table's LaTeX) a control word that
// is not the program's own or escape.TeX's (issue 30, H2: the seed in
// \SpecsimCommand) or a blank line, and nothing panics or allocates more
// than memcap's cap. Seeds are issue 23's and 30's injections. Run:
//
//	go test ./report -run '^$' -fuzz FuzzResultsMeta -fuzztime 1m
func FuzzResultsMeta(f *testing.F) {
	f.Add("../../victim/PWNED", "1}\\immediate\\openout5=x.tex", "<script>alert(1)</script>", `{"axes":[{"name":"../x"}]}`, "alpha")
	f.Add("mysweep", "7\n\n\\input{/etc/passwd}", "[x](javascript:alert(1))", `{"axes":[{"name":"V"}],"metrics":["m"]}`, "m|<b>")
	f.Add("a", "1", "\x1b]0;t\x07", `{"axes":[`+strings.Repeat(`{"name":"a"},`, 50)+`{"name":"b"}]}`, "x")
	f.Add(".hidden", "", "", "null", "")
	f.Add("x", "1 --scale 2}\\immediate\\openout9=owned.tex\\iffalse{", "abc1234", `{"scale":0.5}`, "m")
	f.Add("y", "\\def\\x{\\input{/etc/passwd}}\\x", "", `{"scale":"\\x"}`, "\\x")
	f.Fuzz(func(t *testing.T, name, seed, rev, spec, col string) {
		if fsutil.CheckName(name) != nil {
			return // LoadBundle refuses the file (TestBuildRefusesNamesThatLeaveOut)
		}
		if p, err := fsutil.Under("/out/tables", name, ".md"); err != nil || !strings.HasPrefix(p, "/out/tables/") || strings.Count(p, "/") != 3 {
			t.Fatalf("name %q: %q, %v", name, p, err)
		}
		if col == "" || col == "experiment" {
			col = "m"
		}
		rows := []table.Row{
			{{K: "experiment", V: name}, {K: "V", V: int64(4)}, {K: col, V: 0.5}},
			{{K: "experiment", V: name}, {K: "V", V: int64(8)}, {K: col, V: 0.25}},
		}
		meta := results.Meta{results.KeySeed: seed, results.KeyGitRevision: rev, results.KeySpec: spec}
		// the main job's metadata feeds provenance.tex
		b := &Bundle{Rows: map[string][]table.Row{name: rows}, Meta: map[string]results.Meta{name: meta, MainExperiments[0]: meta}}
		memcap.Cap(t, memcap.DefaultLimit, fmt.Sprintf("metadata %q %q %q", name, seed, rev), func() {
			md := ReportMarkdown(b, nil, Tables(b))
			plain := ReportMarkdown(&Bundle{Rows: b.Rows, Meta: map[string]results.Meta{}}, nil, Tables(&Bundle{Rows: b.Rows, Meta: map[string]results.Meta{}}))
			for _, s := range []string{seed, rev} {
				for _, bad := range []string{"<", "](", "\x1b", "\n#"} {
					if strings.Contains(s, bad) && unescaped(md, bad) > unescaped(plain, bad) {
						t.Fatalf("report.md holds %q from the metadata %q", bad, s)
					}
				}
			}
			plainB := &Bundle{Rows: b.Rows, Meta: map[string]results.Meta{name: {results.KeySeed: "1"}}}
			if msg := foreignTeX(texOutputs(b), texOutputs(plainB), name, seed, rev, spec, col); msg != "" {
				t.Fatal(msg)
			}
			tex := NumbersTeX(Numbers(b))
			line := strings.SplitN(tex, "\n", 3)[1]
			val := strings.TrimSuffix(strings.TrimPrefix(line, `\newcommand{\Seed}{`), "}% master seed")
			if strings.ContainsAny(val, "\n\r") || strings.Contains(strings.NewReplacer(`\textbackslash{}`, "", `\{`, "", `\}`, "", `\&`, "", `\%`, "", `\$`, "", `\#`, "", `\_`, "", `\textasciitilde{}`, "", `\textasciicircum{}`, "").Replace(val), `\`) {
				t.Fatalf("numbers.tex seed %q from %q", val, seed)
			}
		})
	})
}

// unescaped counts the occurrences of s in text not preceded by a
// backslash (Markdown's escape).
func unescaped(text, s string) int {
	n := 0
	for i := 0; ; {
		j := strings.Index(text[i:], s)
		if j < 0 {
			return n
		}
		if i+j == 0 || text[i+j-1] != '\\' {
			n++
		}
		i += j + len(s)
	}
}

// texOutputs are the generated .tex files of b, by name.
func texOutputs(b *Bundle) map[string]string {
	out := map[string]string{"numbers.tex": NumbersTeX(Numbers(b)), "provenance.tex": ProvenanceOf(b).TeX()}
	for _, t := range Tables(b) {
		out["tables/"+t.Name+".tex"] = t.LaTeX()
	}
	return out
}

var controlWord = regexp.MustCompile(`\\[A-Za-z@]+`)

// foreignTeX names a control word in a generated file of got that neither
// the same files without the metadata (plain: the program's own markup)
// nor escape.TeX of an input string (its \textbackslash, \alpha, …)
// holds, or a blank line (which ends a macro's argument); "" if none.
func foreignTeX(got, plain map[string]string, inputs ...string) string {
	ok := map[string]bool{}
	for _, text := range plain {
		for _, w := range controlWord.FindAllString(text, -1) {
			ok[w] = true
		}
	}
	for _, in := range inputs {
		for _, w := range controlWord.FindAllString(escape.TeX(in), -1) {
			ok[w] = true
		}
	}
	for file, text := range got {
		for _, w := range controlWord.FindAllString(text, -1) {
			if !ok[w] {
				return fmt.Sprintf("%s holds the control word %s from the input %q", file, w, inputs)
			}
		}
		if strings.Contains(text, "\n\n") || strings.Contains(text, "\r") {
			return fmt.Sprintf("%s holds a blank line or carriage return from the input %q", file, inputs)
		}
	}
	return ""
}

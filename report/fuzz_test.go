package report

import (
	"fmt"
	"strings"
	"testing"

	"github.com/specsim/specsim/data/results"
	"github.com/specsim/specsim/internal/fsutil"
	"github.com/specsim/specsim/internal/memcap"
	"github.com/specsim/specsim/table"
)

// FuzzResultsMeta: a results table's metadata is data. For any experiment
// name, seed, revision, spec and column names, the bundle takes only a
// name that is a plain file name joined under --out, report.md holds no
// raw HTML or Markdown link from the metadata, numbers.tex no TeX command
// or line break from the seed, and nothing panics or allocates more than
// memcap's cap. Seeds are issue 23's injections. Run:
//
//	go test ./report -run '^$' -fuzz FuzzResultsMeta -fuzztime 1m
func FuzzResultsMeta(f *testing.F) {
	f.Add("../../victim/PWNED", "1}\\immediate\\openout5=x.tex", "<script>alert(1)</script>", `{"axes":[{"name":"../x"}]}`, "alpha")
	f.Add("mysweep", "7\n\n\\input{/etc/passwd}", "[x](javascript:alert(1))", `{"axes":[{"name":"V"}],"metrics":["m"]}`, "m|<b>")
	f.Add("a", "1", "\x1b]0;t\x07", `{"axes":[`+strings.Repeat(`{"name":"a"},`, 50)+`{"name":"b"}]}`, "x")
	f.Add(".hidden", "", "", "null", "")
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
		b := &Bundle{Rows: map[string][]table.Row{name: rows},
			Meta: map[string]results.Meta{name: {results.KeySeed: seed, results.KeyGitRevision: rev, results.KeySpec: spec}}}
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

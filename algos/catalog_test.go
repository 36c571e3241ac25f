package algos

import (
	"flag"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/specsim/specsim/internal/fsutil"
)

var updateReadme = flag.Bool("update-readme", false, "rewrite the rule table of docs/rules.md from the registry")

// TestReadmeRuleTable: the rule table of docs/rules.md is exactly 'simulate
// list --markdown'. Regenerate it with
//
//	go test ./algos -run TestReadmeRuleTable -update-readme
func TestReadmeRuleTable(t *testing.T) {
	const path = "../docs/rules.md"
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	readme := string(raw)
	i, j := strings.Index(readme, ReadmeBegin), strings.Index(readme, ReadmeEnd)
	if i < 0 || j < i {
		t.Fatalf("%s lacks the markers %q and %q around the rule table", path, ReadmeBegin, ReadmeEnd)
	}
	ds, err := Catalog()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := WriteMarkdown(&b, ds); err != nil {
		t.Fatal(err)
	}
	got, want := readme[i+len(ReadmeBegin)+1:j], b.String()
	if got == want {
		return
	}
	if *updateReadme {
		out := readme[:i+len(ReadmeBegin)+1] + want + readme[j:]
		if err := fsutil.WriteBytes(path, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	gl, wl := strings.Split(got, "\n"), strings.Split(want, "\n")
	for k := range max(len(gl), len(wl)) {
		g, w := "", ""
		if k < len(gl) {
			g = gl[k]
		}
		if k < len(wl) {
			w = wl[k]
		}
		if g != w {
			t.Fatalf("the rule table of docs/rules.md drifted from the registry at line %d:\ndocs:     %s\nregistry: %s\n"+
				"regenerate it: go test ./algos -run TestReadmeRuleTable -update-readme", k+1, g, w)
		}
	}
}

// TestRegistryFacts: the facts each rule states in its registry entry
// agree with one another. Every lossy chain rule is swept in
// lossy-frontier, and a sweep passes through the rule's strict point; a
// strict point is stated by lossy rules only; tree rules name a draft kind
// and chain rules none.
func TestRegistryFacts(t *testing.T) {
	for _, e := range All() {
		if e.Lossy && e.Frontier == nil {
			t.Errorf("%s: lossy rule without a Frontier sweep", e.Name)
		}
		if e.Strict != nil && !e.Lossy {
			t.Errorf("%s: a strict point on a rule that is not lossy", e.Name)
		}
		if e.Strict != nil && e.Frontier != nil {
			v, ok := e.Strict[e.Frontier.Param]
			if !ok || len(e.Strict) != 1 || !slices.Contains(e.Frontier.Values, v) {
				t.Errorf("%s: frontier over %s %v misses the strict point %v", e.Name, e.Frontier.Param, e.Frontier.Values, e.Strict)
			}
		}
		if e.Draft != 0 || e.NeedsQ {
			t.Errorf("%s: a chain rule with tree facts", e.Name)
		}
	}
	for _, e := range AllTree() {
		if e.Strict != nil || e.Frontier != nil || e.AllocFree {
			t.Errorf("%s: tree rule with chain-rule facts", e.Name)
		}
	}
}

func TestRegistryNamespace(t *testing.T) {
	for _, c := range []struct {
		name string
		add  func()
	}{
		{"chain over chain", func() { Register(Entry{Info: Info{Name: "token"}, New: noParams(Token{})}) }},
		{"tree over chain", func() { RegisterTree(TreeEntry{Info: Info{Name: "token"}, New: treeNoParams(SpecInfer{})}) }},
		{"chain over tree", func() { Register(Entry{Info: Info{Name: "specinfer"}, New: noParams(Token{})}) }},
		{"strict out of range", func() {
			Register(Entry{Info: Info{Name: "x-bad-strict", Params: []Param{lenienceParam}, Strict: Params{"l": 2}}, New: noParams(Token{})})
		}},
		{"frontier off a parameter", func() {
			Register(Entry{Info: Info{Name: "x-bad-sweep", Params: []Param{lenienceParam}, Frontier: &Sweep{Param: "D", Values: []float64{1}}}, New: noParams(Token{})})
		}},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: Register did not panic", c.name)
				}
			}()
			c.add()
		}()
	}
	if _, err := LookupTree("token"); err == nil || !strings.Contains(err.Error(), "tree algorithm") {
		t.Errorf("LookupTree(token) = %v, want an unknown tree algorithm error", err)
	}
}

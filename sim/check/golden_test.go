package check_test

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"testing"

	"github.com/specsim/specsim/algos"
	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/sim/check"
	"github.com/specsim/specsim/sim/draft"
)

var goldenPrint = flag.Bool("golden-print", false, "print TestGoldenFamilies' values as Go source instead of comparing")

// goldenChecks are the checks TestGoldenFamilies pins: a pool chain check
// with its law test and the cross-row test, a model pair, a tree rule, a
// conformance check and a --rows kinds check, each on a fixed seed.
func goldenChecks(t *testing.T) map[string]func() (check.Result, error) {
	dir := newSource(t, "dirichlet:V=200,a=0.3,beta=0.7", 3, 5)
	pr := newSource(t, "markov:V=4,order=2,quality=0.5,seed=3", 3, 0)
	pl := smallPool(t)
	kp := pool(t, "dirichlet:V=64,contexts=8", 3)
	ctx := context.Background()
	conform := check.ChainRule("token", algos.Token{})
	conform.Conform = true
	tree := check.Rule{Name: "specinfer", Tree: algos.SpecInfer{}, TreeLaw: algos.SpecInfer{}, Draft: sim.DraftIID, K: 2,
		Drafter: func(q sim.Model, depth int) (sim.Drafter, error) {
			return draft.NewTree(sim.DraftIID, draft.Config{Q: q, K: 2, Depth: depth})
		}}
	kinds := check.Rule{Name: "kinds", Steps: byKind{bad: rule(t, "mutant-resample-p"), good: rule(t, "token")}, Law: rule(t, "token").(sim.Lawer), LawName: "token"}
	return map[string]func() (check.Result, error){
		"pool": func() (check.Result, error) {
			return check.Check(ctx, dir, check.ChainRule("token", algos.Token{}), check.Config{Trials: 20000, Seed: 5, Workers: 2, CrossRow: true})
		},
		"pair": func() (check.Result, error) {
			return check.Check(ctx, pr, check.ChainRule("token", algos.Token{}), check.Config{Gamma: 3, Trials: 20000, Seed: 5, Workers: 2})
		},
		"tree": func() (check.Result, error) {
			return check.Check(ctx, sim.Source{Spec: pl.Name, BlockSource: pl}, tree, check.Config{Trials: 20000, Seed: 4, Workers: 2})
		},
		"conform": func() (check.Result, error) {
			return check.Check(ctx, dir, conform, check.Config{Trials: 20000, Seed: 5, Workers: 2})
		},
		"kinds": func() (check.Result, error) {
			return check.Check(ctx, sim.Source{Spec: kp.Name, BlockSource: kp}, kinds, check.Config{Trials: 20000, Seed: 3, Workers: 2, CrossRow: true, RowKinds: []string{"a", "b"}})
		},
	}
}

// goldenTest is one pinned test: its name (a row kind's prefixed with
// "kind: "), statistic, degrees of freedom and p-value.
type goldenTest struct {
	name    string
	stat    float64
	df      int
	p       float64
	checkPV float64
}

// goldenOf lists r's tests, pooled then each row kind's.
func goldenOf(r check.Result) []goldenTest {
	var out []goldenTest
	for _, x := range r.Tests {
		out = append(out, goldenTest{x.Name, x.Stat, x.DF, x.PValue, r.PValue})
	}
	for _, k := range r.RowKinds {
		for _, x := range k.Tests {
			out = append(out, goldenTest{k.Kind + ": " + x.Name, x.Stat, x.DF, x.PValue, r.PValue})
		}
	}
	return out
}

// TestGoldenFamilies pins every test's name, statistic, df and p-value,
// and the result's p-value, of five checks on fixed seeds, written from
// the code before the verdict's families were ported (issue 27): each
// family's port must leave them bit-identical. A test not pinned (a new
// family's) is logged, not failed (compareGolden), so adding a family
// needs no regeneration. Regenerate (only for a change that means to
// move them, saying why) with
// go test ./sim/check -run TestGoldenFamilies -v -golden-print.
func TestGoldenFamilies(t *testing.T) {
	t.Parallel()
	var sb strings.Builder
	for _, name := range []string{"pool", "pair", "tree", "conform", "kinds"} {
		r, err := goldenChecks(t)[name]()
		if err != nil {
			t.Fatal(err)
		}
		got := goldenOf(r)
		if *goldenPrint {
			fmt.Fprintf(&sb, "\t%q: {\n", name)
			for _, g := range got {
				fmt.Fprintf(&sb, "\t\t{%q, %.17g, %d, %.17g, %.17g},\n", g.name, g.stat, g.df, g.p, g.checkPV)
			}
			fmt.Fprintf(&sb, "\t},\n")
			continue
		}
		compareGolden(t, name, got, golden[name])
	}
	if *goldenPrint {
		fmt.Print(sb.String())
	}
}

// compareGolden fails unless every pinned test of want is in got, in
// want's order, with its statistic, df and p-value bit-identical. A test
// of got not pinned is logged; the result's p-value, which the
// multiplicity correction moves when tests are added, is compared only
// when there is none.
func compareGolden(t *testing.T, name string, got, want []goldenTest) {
	t.Helper()
	at := map[string]int{}
	for i, g := range got {
		if _, dup := at[g.name]; dup {
			t.Errorf("%s: test %q reported twice", name, g.name)
		}
		at[g.name] = i
	}
	pinned, last := map[string]bool{}, -1
	for _, w := range want {
		pinned[w.name] = true
		i, ok := at[w.name]
		switch {
		case !ok:
			t.Errorf("%s: pinned test %q is missing", name, w.name)
			continue
		case i < last:
			t.Errorf("%s: pinned test %q is reported out of its pinned order", name, w.name)
		}
		last = i
		if g := got[i]; g.stat != w.stat || g.df != w.df || g.p != w.p {
			t.Errorf("%s: test %q: got stat %v df %d p %v, want stat %v df %d p %v", name, w.name, g.stat, g.df, g.p, w.stat, w.df, w.p)
		}
	}
	extra := 0
	for _, g := range got {
		if !pinned[g.name] {
			extra++
			t.Logf("%s: test %q is not pinned (stat %v, df %d, p %v): not compared", name, g.name, g.stat, g.df, g.p)
		}
	}
	switch {
	case len(got) == 0 || len(want) == 0:
	case extra > 0:
		t.Logf("%s: %d tests not pinned: the result's p-value %v is not compared with the pinned %v", name, extra, got[0].checkPV, want[0].checkPV)
	case got[0].checkPV != want[0].checkPV:
		t.Errorf("%s: the result's p-value %v, want %v", name, got[0].checkPV, want[0].checkPV)
	}
}

package check_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/specsim/specsim/algos"
	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/sim/check"
	"github.com/specsim/specsim/sim/run"
)

// byKind verifies the blocks of even contexts (row kind 0 of two) with
// bad and the others with good.
type byKind struct{ bad, good sim.Algorithm }

func (s byKind) Steps(rng *rand.Rand, bs []sim.Block, outs []sim.Outcome) error {
	for i := range bs {
		a := s.good
		if bs[i].Ctx%2 == 0 {
			a = s.bad
		}
		outs[i] = a.Accept(rng, &bs[i])
	}
	return nil
}

func rule(t *testing.T, name string) sim.Algorithm {
	t.Helper()
	e, err := algos.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	a, err := e.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestRowKinds: on a pool whose even contexts are row kind "a" and odd
// ones kind "b", a sampler wrong on kind a only (the resample-from-p
// mutant) is violated and names kind a violated and kind b not detected;
// token verification on both is not detected in both. The pooled tests'
// statistics equal those of the same check without row kinds exactly
// (the pooled counts are the kinds' sums); only their Holm share differs,
// the family holding every kind's tests too. Seeds are fixed, so the
// verdicts are deterministic; the level is 0.01.
func TestRowKinds(t *testing.T) {
	t.Parallel()
	pl := pool(t, "dirichlet:V=64,contexts=8", 3)
	src := sim.Source{Spec: pl.Name, BlockSource: pl}
	token := rule(t, "token")
	cfg := check.Config{Trials: 20000, Seed: 3, Batch: 16, CrossRow: true, RowKinds: []string{"a", "b"}}
	for _, c := range []struct {
		bad  string
		want [3]string // pooled, a, b
	}{
		{"mutant-resample-p", [3]string{check.Violated, check.Violated, check.NotDetected}},
		{"token", [3]string{check.NotDetected, check.NotDetected, check.NotDetected}},
	} {
		r := check.Rule{Name: c.bad, Steps: byKind{bad: rule(t, c.bad), good: token}}
		res, err := check.Check(context.Background(), src, r, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.RowKinds) != 2 {
			t.Fatalf("%s: %d row kinds, want 2", c.bad, len(res.RowKinds))
		}
		got := [3]string{res.Verdict, res.RowKinds[0].Verdict, res.RowKinds[1].Verdict}
		t.Logf("%s: %v; %s", c.bad, got, res.Claim)
		if got != c.want {
			t.Errorf("%s: verdicts (pooled, a, b) %v, want %v", c.bad, got, c.want)
		}
		if n := res.RowKinds[0].Trials + res.RowKinds[1].Trials; n != res.Trials {
			t.Errorf("%s: the kinds hold %d trials of %d", c.bad, n, res.Trials)
		}
		m := len(res.Tests) + len(res.RowKinds[0].Tests) + len(res.RowKinds[1].Tests)
		checkKindFamilies(t, c.bad, res)
		plain := cfg
		plain.RowKinds = nil
		ref, err := check.Check(context.Background(), src, r, plain)
		if err != nil {
			t.Fatal(err)
		}
		for i, x := range ref.Tests {
			y := res.Tests[i]
			if x.Name != y.Name || x.Stat != y.Stat || x.DF != y.DF || x.PValue != y.PValue || x.N != y.N {
				t.Errorf("%s: pooled test %q: X2 %g df %d p %g n %d with row kinds, X2 %g df %d p %g n %d without", c.bad, x.Name, y.Stat, y.DF, y.PValue, y.N, x.Stat, x.DF, x.PValue, x.N)
			}
			if y.LevelShare != 0.01/float64(m) {
				t.Errorf("%s: %q at level share %g, want 0.01/%d", c.bad, y.Name, y.LevelShare, m)
			}
		}
	}
}

// checkKindFamilies checks, whatever the families are, that every row
// kind reports the same tests, each a test of the pooled check of the
// same family (a family kept per kind, Family.byKind, reports its tests
// per kind; some, as the rows tests of a batch, are pooled only), and
// that the rows tests of a batch are pooled only.
func checkKindFamilies(t *testing.T, name string, res check.Result) {
	t.Helper()
	type key struct {
		fam  check.FamilyName
		name string
	}
	pooled := map[key]bool{}
	for _, x := range res.Tests {
		pooled[key{x.Family, x.Name}] = true
	}
	var first []key
	for k, kr := range res.RowKinds {
		var ks []key
		for _, x := range kr.Tests {
			ks = append(ks, key{x.Family, x.Name})
			if !pooled[key{x.Family, x.Name}] {
				t.Errorf("%s: kind %q reports %q (family %q), which the pooled check does not", name, kr.Kind, x.Name, x.Family)
			}
			if strings.HasPrefix(x.Name, "rows ") {
				t.Errorf("%s: kind %q reports the rows test %q, which is pooled only", name, kr.Kind, x.Name)
			}
		}
		if k == 0 {
			first = ks
		} else if !slices.Equal(ks, first) {
			t.Errorf("%s: kind %q reports %d tests, kind %q %d, or others", name, kr.Kind, len(ks), res.RowKinds[0].Kind, len(first))
		}
	}
	kept := map[check.FamilyName]bool{} // the families reported per kind
	for _, k := range first {
		kept[k.fam] = true
	}
	cross, want := 0, 0
	for _, x := range res.Tests {
		if strings.HasPrefix(x.Name, "rows ") {
			cross++
		} else if kept[x.Family] {
			want++ // a family kept per kind reports all its other tests per kind
		}
	}
	if len(first) != want {
		t.Errorf("%s: %d tests per kind, want %d (the pooled tests of the families kept per kind, but the rows tests)", name, len(first), want)
	}
	if cross == 0 || len(first) == 0 {
		t.Errorf("%s: %d rows tests, %d tests per kind; want both", name, cross, len(first))
	}
}

// TestRowKindsLawOff: a conformance check that leaves kind b out tests
// kind a's steps only (its law test's count is kind a's trials), and
// reports kind b n/a with the reason given.
func TestRowKindsLawOff(t *testing.T) {
	t.Parallel()
	pl := pool(t, "dirichlet:V=64,contexts=8", 3)
	src := sim.Source{Spec: pl.Name, BlockSource: pl}
	token := rule(t, "token")
	r := check.ChainRule("token", token)
	r.Conform, r.Edge = true, nil
	cfg := check.Config{Trials: 8000, Seed: 3, Batch: 16, RowKinds: []string{"a", "b"}, LawKindsOff: []string{"", "draft length 2"}}
	res, err := check.Check(context.Background(), src, r, cfg)
	if err != nil {
		t.Fatal(err)
	}
	a, b := res.RowKinds[0], res.RowKinds[1]
	if res.Verdict != check.NotDetected || a.Verdict != check.NotDetected || b.Verdict != check.NotApplicable || b.Note != "draft length 2" || len(b.Tests) != 0 {
		t.Errorf("verdicts %s, a %s, b %s (%q, %d tests); want not_detected, not_detected, n/a with the reason", res.Verdict, a.Verdict, b.Verdict, b.Note, len(b.Tests))
	}
	if len(res.Tests) != 1 || res.Tests[0].N != a.Trials || a.Trials != 4000 {
		t.Errorf("pooled law test over %d steps, kind a %d trials; want kind a's 4000 only", res.Tests[0].N, a.Trials)
	}
	cfg.LawKindsOff = []string{""}
	if _, err := check.Check(context.Background(), src, r, cfg); err == nil {
		t.Error("one law-kinds-off entry for two kinds accepted")
	}
}

// BenchmarkRowKinds times a whole check (trials, tests and verdict) of
// token verification through a Stepper on a 48-context pool, without
// row kinds and with 2 and 6 (the per-kind report): the cost of the
// report per trial, in process CPU time (cpu-ns/trial). Run with
// -bench RowKinds -benchtime 5x.
func BenchmarkRowKinds(b *testing.B) {
	pl := pool(b, "dirichlet:V=100,contexts=48", 4)
	src := sim.Source{Spec: pl.Name, BlockSource: pl}
	e, _ := algos.Lookup("token")
	a, _ := e.New(nil)
	const trials = 100000
	for _, kinds := range [][]string{nil, {"a", "b"}, {"a", "b", "c", "d", "e", "f"}} {
		b.Run(fmt.Sprintf("kinds=%d", len(kinds)), func(b *testing.B) {
			r := check.Rule{Name: "token", Steps: check.AlgorithmStepper{A: a}, Law: a.(sim.Lawer)}
			cfg := check.Config{Trials: trials, Seed: 1, Batch: 1024, Workers: 1, CrossRow: true, LawEvery: 1, RowKinds: kinds}
			cpu0 := run.ProcessCPU()
			for b.Loop() {
				if _, err := check.Check(context.Background(), src, r, cfg); err != nil {
					b.Fatal(err)
				}
			}
			// CPU time, not wall time: on a loaded machine the wall
			// clock measures the other processes too
			b.ReportMetric(float64((run.ProcessCPU()-cpu0).Nanoseconds())/float64(b.N)/trials, "cpu-ns/trial")
		})
	}
}

// shortKind runs token verification on every block, cut to its first two
// drafts on odd contexts (row kind "b" of two, drafting γ = 2 of γ = 4),
// as an engine serving requests of their own draft length does.
type shortKind struct{ token sim.Algorithm }

func (s shortKind) Steps(rng *rand.Rand, bs []sim.Block, outs []sim.Outcome) error {
	for i := range bs {
		b := bs[i]
		if b.Ctx%2 == 1 {
			b.Tokens, b.Q, b.P = b.Tokens[:2], b.Q[:2], b.P[:3]
		}
		outs[i] = s.token.Accept(rng, &b)
	}
	return nil
}

// Fits score each row at its own draft length (Config.KindGammas): a
// correct token verifier whose kind-b rows draft γ = 2 of γ = 4 is
// explained best by token verification. Scored at γ = 4, those rows'
// outcomes (a bonus token after two accepted drafts) are impossible
// under token's law and mutant-exact-match-resample ranked first.
func TestFitsAtKindGamma(t *testing.T) {
	t.Parallel()
	pl := pool(t, "dirichlet:V=64,contexts=8", 4)
	src := sim.Source{Spec: pl.Name, BlockSource: pl}
	var cands []check.Candidate
	for _, name := range []string{"token", "exact-match", "mutant-resample-p", "mutant-exact-match-resample"} {
		e, _ := algos.Lookup(name)
		cands = append(cands, check.Candidate{Name: name, Lossless: !e.Mutant, Law: rule(t, name).(sim.Lawer)})
	}
	res, err := check.Check(context.Background(), src, check.Rule{Name: "engine", Steps: shortKind{rule(t, "token")}},
		check.Config{Trials: 8000, Seed: 3, Batch: 16, RowKinds: []string{"a", "b"}, KindGammas: []int{4, 2}, Candidates: cands})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Fits) == 0 || res.Fits[0].Name != "token" {
		t.Errorf("fits %+v; want token first", res.Fits)
	}
}

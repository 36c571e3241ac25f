package algos_test

import (
	"math"
	"math/rand/v2"
	"regexp"
	"testing"

	"github.com/specsim/specsim/algos"
	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/sim/check"
	"github.com/specsim/specsim/sim/draft"
	"github.com/specsim/specsim/sim/stattest"
)

// threadURL is the form of a public thread: a GitHub issue or pull request.
var threadURL = regexp.MustCompile(`^https://github\.com/[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+/(issues|pull)/[0-9]+$`)

// TestBugCatalogue holds every catalogue entry to its properties: a unique
// name and mutant; a thread that is a GitHub issue or pull request URL or
// says there is none; a mutant that is a registered chain mutant; for a
// bug shown by its law, a law that departs from token verification's on
// some random block (so a likelihood can tell them apart), and for a bug
// shown by the edge case, an edge case that fails. Every registered chain
// mutant is catalogued, so none is left without its thread.
func TestBugCatalogue(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4))
	var blocks []*sim.Block
	for range 8 {
		blocks = append(blocks, randBlock(rng, 5, 3))
	}
	names, mutants := map[string]bool{}, map[string]bool{}
	for _, b := range algos.Bugs() {
		if b.Name == "" || names[b.Name] || mutants[b.Mutant] {
			t.Errorf("%+v: empty or duplicate name or mutant", b)
		}
		names[b.Name], mutants[b.Mutant] = true, true
		if b.Thread != algos.NoThread && !threadURL.MatchString(b.Thread) {
			t.Errorf("%s: thread %q is neither a GitHub issue or pull request URL nor %q", b.Name, b.Thread, algos.NoThread)
		}
		if b.Evidence == algos.ByRows {
			rowsBug(t, b)
			continue
		}
		e, err := algos.Lookup(b.Mutant)
		if err != nil || !e.Mutant {
			t.Errorf("%s: mutant %s: %v (registered mutant %v)", b.Name, b.Mutant, err, e.Mutant)
			continue
		}
		a, err := e.Build(nil)
		if err != nil {
			t.Fatal(err)
		}
		switch b.Evidence {
		case algos.ByLaw:
			if d := lawDeparture(t, a, blocks); !(d > 1e-6) {
				t.Errorf("%s: the law of %s departs from token's by %.3g at most on %d blocks; no likelihood can name it", b.Name, b.Mutant, d, len(blocks))
			}
		case algos.ByEdge:
			if check.EdgeCheck(a) == nil {
				t.Errorf("%s: the edge cases do not flag %s", b.Name, b.Mutant)
			}
		}
	}
	for _, e := range algos.All() {
		if e.Mutant && !mutants[e.Name] {
			t.Errorf("chain mutant %s is not in the bug catalogue", e.Name)
		}
	}
}

// rowsBug holds a bug shown by the rows tests to its properties: its
// mutant is a registered tree mutant that verifies a batch at once; run
// one row at a time with its registered draft kind (k = 2, depth 1, V = 4)
// its exact law is the target's to 1e-12, so no likelihood of a row's
// outcomes can tell it from a lossless rule; and two rows of a batch after
// the same context emit the same first token in more of 4,000 batches
// than the 1 − 1e-6 Wilson interval allows for independent rows (which
// agree with probability Σ_x p(x)²): the coupling that the rows-of-a-batch
// tests see.
func rowsBug(t *testing.T, b algos.Bug) {
	t.Helper()
	e, err := algos.LookupTree(b.Mutant)
	if err != nil || !e.Mutant {
		t.Errorf("%s: mutant %s: %v (registered tree mutant %v)", b.Name, b.Mutant, err, e.Mutant)
		return
	}
	a, err := e.Build(nil)
	if err != nil {
		t.Fatal(err)
	}
	ba, ok := a.(algos.BatchTreeAlgorithm)
	lw, lawOK := a.(sim.TreeLawer)
	if !ok || !lawOK {
		t.Fatalf("%s: %s verifies a batch at once: %v; has a tree law: %v", b.Name, b.Mutant, ok, lawOK)
	}
	pair, err := sim.NewMarkovPair(sim.NewRand(91, 0), sim.MarkovConfig{V: 4, Order: 1, A: 0.7, Quality: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	d, err := draft.NewTree(e.Draft, draft.Config{Q: pair.Q, K: 2, Depth: 1})
	if err != nil {
		t.Fatal(err)
	}
	ex, err := sim.ExactTree(pair.P, d, lw, sim.TreeExactConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if !ex.Lossless || ex.MaxAbsError > 1e-12 {
		t.Errorf("%s: one row's law departs from the target's by %.3g; a likelihood could name it (use ByLaw)", b.Name, ex.MaxAbsError)
	}
	const n = 4000
	p := make([]float64, 4)
	pair.P.Next(nil, p)
	indep := 0.0
	for _, v := range p {
		indep += v * v
	}
	agree := algos.CrossRowAgreement(sim.NewRand(3, 1), ba, d, pair.P, nil, n)
	if lo, _ := stattest.Wilson(int64(agree), n, 1-1e-6); !(lo > indep) {
		t.Errorf("%s: rows of a batch agree %d/%d (interval from %.4f), as independent rows may (Σp² = %.4f)", b.Name, agree, n, lo, indep)
	}
}

// lawDeparture is the largest |law of a - law of token| over the blocks'
// outcomes (NaN when a has no law).
func lawDeparture(t *testing.T, a sim.Algorithm, blocks []*sim.Block) float64 {
	lw, ok := a.(sim.Lawer)
	if !ok {
		return math.NaN()
	}
	var got, want sim.Law
	worst := 0.0
	for _, b := range blocks {
		if err := lw.Law(b, &got); err != nil {
			t.Fatal(err)
		}
		if err := (algos.Token{}).Law(b, &want); err != nil {
			t.Fatal(err)
		}
		for i := range got.P {
			worst = math.Max(worst, math.Abs(got.P[i]-want.P[i]))
		}
	}
	return worst
}

// TestReducedPrecisionAtEqualLogits: with a uniform draft every logit is
// the top logit 30, which bfloat16 holds exactly, so the reduced-precision
// mutant's law is token verification's to rounding; with a draft of
// probabilities (0.7, 0.2, 0.1) the logits 30 + ln(q/0.7) round to
// multiples of 2^-3, so q' departs from q, and so does the law where the
// draft token 0 is accepted with probability p/q' < 1.
func TestReducedPrecisionAtEqualLogits(t *testing.T) {
	t.Parallel()
	mk := func(q []float64) *sim.Block {
		return &sim.Block{Tokens: []int{0}, Q: []sim.Row{sim.F64(q)},
			P: []sim.Row{sim.F64([]float64{0.2, 0.3, 0.5}), sim.F64([]float64{0.1, 0.1, 0.8})}, Ctx: -1}
	}
	if d := lawDeparture(t, algos.ReducedPrecision{}, []*sim.Block{mk([]float64{1.0 / 3, 1.0 / 3, 1.0 / 3})}); d > 1e-15 {
		t.Errorf("uniform draft: law departs from token's by %.3g", d)
	}
	if d := lawDeparture(t, algos.ReducedPrecision{}, []*sim.Block{mk([]float64{0.7, 0.2, 0.1})}); !(d > 1e-4) {
		t.Errorf("draft (0.7, 0.2, 0.1): law departs from token's by only %.3g", d)
	}
}

package algos_test

import (
	"math"
	"math/rand/v2"
	"regexp"
	"testing"

	"github.com/specsim/specsim/algos"
	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/sim/check"
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

package draft_test

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/sim/draft"
	"github.com/specsim/specsim/sim/stattest"
)

// row64 returns a float64 row's values.
func row64(r sim.Row) []float64 { return r.Float64s(nil) }

// At the empty context with a fixed policy, draft.Chain (through the
// ChainRounds adapter) draws exactly sim.Chain's blocks, the block source
// of a model pair: same tokens, draft and target rows, from the same rng.
func TestChainIsSimChain(t *testing.T) {
	pair := testPair(t)
	const gamma = 4
	sc, err := sim.NewChain(pair, gamma)
	if err != nil {
		t.Fatal(err)
	}
	d, err := draft.NewChain(pair.Q, draft.Policy{})
	if err != nil {
		t.Fatal(err)
	}
	var ctx []int
	ch := draft.ChainRounds(d, pair.P, gamma, &ctx)
	r1, r2 := sim.NewRand(5, 1), sim.NewRand(5, 1)
	var a, b sim.Block
	for range 500 {
		_ = sc.Next(r1, &a)
		_ = ch.Next(r2, &b)
		if !slices.Equal(a.Tokens, b.Tokens) || len(b.P) != gamma+1 || ch.Passes() != gamma {
			t.Fatalf("sim.Chain %v, draft.Chain %v (%d rows, %d passes)", a.Tokens, b.Tokens, len(b.P), ch.Passes())
		}
		for i := range a.Q {
			if !slices.Equal(row64(a.Q[i]), row64(b.Q[i])) || !slices.Equal(row64(a.Q[i]), ch.Q(i)) {
				t.Fatalf("draft row %d differs", i)
			}
		}
		for i := range a.P {
			if !slices.Equal(row64(a.P[i]), row64(b.P[i])) || !slices.Equal(row64(a.P[i]), ch.P(i)) {
				t.Fatalf("target row %d differs", i)
			}
		}
	}
}

// Policy conf:τ stops right after the first token drafted with q(x) < τ:
// every draft is either γ tokens whose first γ−1 have q ≥ τ, or shorter
// and ends with the first q < τ. Oracle drafts γ like fixed.
func TestChainPolicy(t *testing.T) {
	pair := testPair(t)
	const gamma, tau = 6, 0.4
	conf, _ := draft.NewChain(pair.Q, draft.Policy{Kind: draft.PolicyConf, Threshold: tau})
	oracle, _ := draft.NewChain(pair.Q, draft.Policy{Kind: draft.PolicyOracle})
	var rows draft.Rows
	rows.V = 3
	rng := sim.NewRand(2, 3)
	var b sim.Block
	short := 0
	for range 2000 {
		conf.Draft(rng, []int{1}, gamma, &b, &rows)
		n := len(b.Tokens)
		for i, x := range b.Tokens[:n-1] {
			if q := b.Q[i].At(x); q < tau {
				t.Fatalf("draft %v went on after token %d of q = %g < %g", b.Tokens, i, q, tau)
			}
		}
		if q := b.Q[n-1].At(b.Tokens[n-1]); n < gamma && q >= tau {
			t.Fatalf("draft %v stopped after a token of q = %g >= %g", b.Tokens, q, tau)
		}
		if n < gamma {
			short++
		}
		if conf.Passes(n) != n {
			t.Fatalf("chain passes for %d tokens = %d", n, conf.Passes(n))
		}
	}
	if short == 0 || short == 2000 {
		t.Errorf("%d of 2000 conf drafts stopped early; the test pair should give some of each", short)
	}
	for range 100 {
		oracle.Draft(rng, nil, gamma, &b, &rows)
		if len(b.Tokens) != gamma {
			t.Fatalf("oracle drafted %d tokens, want %d", len(b.Tokens), gamma)
		}
	}
}

// Heads draft position i from head i after the context alone, the
// positions independent: over 30 000 drafts of two heads the pairs
// (x_1, x_2) pass a χ² test against h_1(x_1)·h_2(x_2) at level 1e-6
// (fixed seed). All heads run in one pass.
func TestHeadsLaw(t *testing.T) {
	h1, h2 := sim.Fixed{0.6, 0.3, 0.1}, sim.Fixed{0.2, 0.2, 0.6}
	d, err := draft.NewHeads([]sim.Model{h1, h2}, draft.Policy{})
	if err != nil {
		t.Fatal(err)
	}
	rows := draft.Rows{V: 3}
	rng := sim.NewRand(4, 4)
	obs := make([]int64, 9)
	var b sim.Block
	for range 30000 {
		d.Draft(rng, []int{2, 0}, 5, &b, &rows)
		if len(b.Tokens) != 2 {
			t.Fatalf("two heads drafted %d tokens", len(b.Tokens))
		}
		obs[3*b.Tokens[0]+b.Tokens[1]]++
	}
	probs := make([]float64, 9)
	for x := range 3 {
		for y := range 3 {
			probs[3*x+y] = h1[x] * h2[y]
		}
	}
	res, err := stattest.ChiSquare(obs, probs, 5)
	if err != nil {
		t.Fatal(err)
	}
	if res.PValue < 1e-6 {
		t.Errorf("heads' pairs disagree with the product law: X² = %.1f p = %.3g", res.Stat, res.PValue)
	}
	if d.Passes(2) != 1 || d.Passes(0) != 0 {
		t.Errorf("heads passes: %d for 2 tokens, %d for none", d.Passes(2), d.Passes(0))
	}
}

func TestFindCandidates(t *testing.T) {
	for _, c := range []struct {
		ids         []int
		n, num      int
		want        []int
		description string
	}{
		{[]int{1, 2, 3, 4, 1, 2}, 3, 2, []int{3, 4}, "bigram 1 2 matches at 0, continuation 3 4"},
		{[]int{1, 2, 3, 4, 1, 2}, 3, 5, nil, "continuation would run past the end: no candidates"},
		{[]int{5, 1, 2, 9, 1, 2}, 2, 1, []int{9}, "first match wins"},
		{[]int{7, 8, 9}, 3, 1, nil, "no earlier occurrence"},
		{[]int{1, 1, 1, 1}, 1, 2, []int{1, 1}, "overlapping windows, self match excluded"},
	} {
		got := draft.FindCandidates(nil, c.ids, c.n, c.num)
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: FindCandidates(%v, %d, %d) = %v, want %v", c.description, c.ids, c.n, c.num, got, c.want)
		}
	}
}

// Lookup drafts FindCandidates' tokens with one-hot rows, draws no
// randomness and costs no pass.
func TestLookup(t *testing.T) {
	d, err := draft.NewLookup(3)
	if err != nil {
		t.Fatal(err)
	}
	rows := draft.Rows{V: 6}
	var b sim.Block
	d.Draft(nil, []int{1, 2, 3, 4, 5, 1, 2}, 2, &b, &rows)
	if !slices.Equal(b.Tokens, []int{3, 4}) || len(b.Q) != 2 || d.Passes(2) != 0 {
		t.Fatalf("lookup drafted %v with %d rows", b.Tokens, len(b.Q))
	}
	for i, x := range b.Tokens {
		for y := range 6 {
			if want := map[bool]float64{true: 1, false: 0}[x == y]; b.Q[i].At(y) != want {
				t.Fatalf("row %d is not one-hot at %d: %v", i, x, row64(b.Q[i]))
			}
		}
	}
	d.Draft(nil, []int{7, 8, 9}, 2, &b, &rows)
	if len(b.Tokens) != 0 || len(b.Q) != 0 {
		t.Errorf("no match drafted %v", b.Tokens)
	}
}

func TestParsePolicy(t *testing.T) {
	for in, want := range map[string]draft.Policy{"fixed": {Kind: draft.PolicyFixed}, "oracle": {Kind: draft.PolicyOracle},
		"conf:0.3": {Kind: draft.PolicyConf, Threshold: 0.3}} {
		got, err := draft.ParsePolicy(in)
		if err != nil || got != want {
			t.Errorf("ParsePolicy(%q) = %v, %v; want %v", in, got, err, want)
		}
		if got.String() != in {
			t.Errorf("%v.String() = %q, want %q", got, got.String(), in)
		}
	}
	for _, bad := range []string{"conf:1", "conf:x", "dynamic"} {
		if _, err := draft.ParsePolicy(bad); err == nil {
			t.Errorf("ParsePolicy(%q) accepted", bad)
		}
	}
}

// New builds the chain drafters by name and refuses what they cannot do.
func TestChainDrafterConfigs(t *testing.T) {
	q := sim.Fixed{0.5, 0.5}
	for _, c := range []draft.Config{
		{Name: draft.ChainName, Q: q},
		{Name: draft.HeadsName, Heads: []sim.Model{q, q}, Depth: 2},
		{Name: draft.LookupName, MaxNgram: 3, Policy: draft.Policy{Kind: draft.PolicyOracle}},
	} {
		d, err := draft.New(c)
		if err != nil || d.Chain == nil || d.Tree != nil {
			t.Errorf("%s: New = %+v, %v", c.Name, d, err)
		}
	}
	for _, c := range []struct {
		c    draft.Config
		want string
	}{
		{draft.Config{Name: draft.ChainName}, "no draft model"},
		{draft.Config{Name: draft.ChainName, Q: q, Policy: draft.Policy{Kind: draft.PolicyConf, Threshold: 1}}, "threshold = 1"},
		{draft.Config{Name: draft.ChainName, Q: q, Policy: draft.Policy{Kind: "always"}}, `policy "always"`},
		{draft.Config{Name: draft.HeadsName, Heads: []sim.Model{q}, Depth: 2}, "needs 2 heads, has 1"},
		{draft.Config{Name: draft.HeadsName}, "no heads"},
		{draft.Config{Name: draft.LookupName, MaxNgram: 0}, "max ngram = 0"},
		{draft.Config{Name: draft.LookupName, MaxNgram: 3, Policy: draft.Policy{Kind: draft.PolicyConf, Threshold: 0.5}}, "no draft confidence"},
	} {
		if _, err := draft.New(c.c); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: err = %v, want it to say %q", c.c, err, c.want)
		}
	}
	if _, err := draft.NewTree(sim.DraftIID, draft.Config{Name: draft.ChainName, Q: q, K: 1, Depth: 1}); err != nil {
		t.Errorf("NewTree ignores Config.Name: %v", err)
	}
}

// Names lists every drafter of the family once, sorted (a drafter file
// added later joins the list without a change here).
func TestNames(t *testing.T) {
	got := draft.Names()
	for _, want := range []string{"chain", "dynamic", "fixed", "greedy", "heads", "iid", "lookup", "topk", "wor"} {
		if !slices.Contains(got, want) {
			t.Errorf("Names = %v lacks %s", got, want)
		}
	}
	if !slices.IsSorted(got) || len(slices.Compact(slices.Clone(got))) != len(got) {
		t.Errorf("Names = %v: not sorted or not unique", got)
	}
}

// The fast top-k of the dynamic tree orders like sim.TopTokens (checked
// through the tree it builds: the root's children of a k-wide tree of
// depth 1 are the top k).
func TestDynamicTopK(t *testing.T) {
	q := sim.Fixed{0.1, 0.3, 0, 0.3, 0.05, 0.25}
	for k := 1; k <= 6; k++ {
		d, _ := draft.NewDynamic(q, k, 1)
		var tr sim.Tree
		d.Draft(nil, nil, &tr)
		var got []int
		for _, c := range tr.Nodes[0].Kids {
			got = append(got, tr.Nodes[c].Token)
		}
		if want := sim.TopTokens(nil, q, k); !slices.Equal(got, want) {
			t.Errorf("k = %d: children %v, sim.TopTokens %v", k, got, want)
		}
	}
}

// accept is Leviathan et al.'s rule written out for the test.
func accept(rng *rand.Rand, b *sim.Block) sim.Outcome {
	for i, x := range b.Tokens {
		if rng.Float64()*b.Q[i].At(x) < b.P[i].At(x) {
			continue
		}
		return sim.Outcome{Accepted: i, Next: sim.ArgmaxRow(b.P[i])}
	}
	g := len(b.Tokens)
	return sim.Outcome{Accepted: g, Next: sim.SampleRow(rng.Float64(), b.P[g])}
}

// Chains is a block source over a growing context: valid blocks, target
// rows after the context, and a context that grows by what each outcome
// emits.
func TestChainsSource(t *testing.T) {
	pair := testPair(t)
	d, _ := draft.NewChain(pair.Q, draft.Policy{})
	ctx := []int{0, 2}
	src := draft.ChainRounds(d, pair.P, 3, &ctx)
	var _ sim.BlockSource = src
	rng := sim.NewRand(1, 2)
	var b sim.Block
	row := make([]float64, 3)
	for range 50 {
		before := slices.Clone(ctx)
		if err := src.Next(rng, &b); err != nil {
			t.Fatal(err)
		}
		if err := b.Check(); err != nil || b.Gamma() != 3 {
			t.Fatalf("block: %v, gamma %d", err, b.Gamma())
		}
		pair.P.Next(append(slices.Clone(before), b.Tokens[:2]...), row)
		if !slices.Equal(row, src.P(2)) {
			t.Fatalf("target row 2 is not p(.|ctx, x_1, x_2)")
		}
		o := accept(rng, &b)
		src.Commit(&b, o)
		if got := len(ctx) - len(before); got != o.Emitted() || !slices.Equal(ctx[:len(before)], before) {
			t.Fatalf("context grew by %d, outcome emitted %d", got, o.Emitted())
		}
	}
}

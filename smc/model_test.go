package smc

import (
	"errors"
	"math"
	"testing"

	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/sim/source"
)

// TestParsePotential: every documented spec parses to its potential and
// every malformed one is an ErrBadModel naming the spec.
func TestParsePotential(t *testing.T) {
	pair := sim.Pair{P: sim.Fixed{0.5, 0.5}, Q: sim.Fixed{0.25, 0.75}}
	for spec, want := range map[string]string{
		"forbid:1,2": "forbid:1,2", "end": "end", "length:2-4": "length:2-4", "length:3": "length:3-3",
		"keyword:2": "keyword:2", "expert:q": "expert:q", "expert:p:0.5": "expert:p:0.5",
	} {
		p, err := ParsePotential(spec, pair)
		if err != nil || p.String() != want {
			t.Errorf("%s: %v, %v; want %s", spec, p, err, want)
		}
	}
	for _, spec := range []string{"forbid:", "forbid:a", "end:1", "length:x", "keyword:", "expert:r", "expert:q:x", "nope"} {
		if _, err := ParsePotential(spec, pair); !errors.Is(err, ErrBadModel) {
			t.Errorf("%s: error %v, want ErrBadModel", spec, err)
		}
	}
}

// TestPrompt: with a prompt the models condition on it. For an order-1
// Markov chain and prompt (2), the posterior mass of strings starting with
// x is the chain's row after token 2 at x (no potentials: Z = 1).
func TestPrompt(t *testing.T) {
	src, err := source.New("markov:V=3,order=1,seed=4", 1, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	pair, _ := sim.PairOf(src.BlockSource)
	m := &Model{LM: pair.P, Prompt: []int{2}, EOS: 0, T: 3}
	ex, err := Enumerate(m)
	if err != nil {
		t.Fatal(err)
	}
	row := make([]float64, 3)
	pair.P.Next([]int{2}, row)
	first := make([]float64, 3)
	for _, s := range ex.Post {
		first[s.Tokens[0]] += s.P
	}
	for x := range row {
		if math.Abs(first[x]-row[x]) > 1e-12 {
			t.Errorf("P(first token %d) = %.15g, want p(%d | 2) = %.15g", x, first[x], x, row[x])
		}
	}
	if math.Abs(ex.Z-1) > 1e-12 {
		t.Errorf("Z = %.17g without potentials, want 1", ex.Z)
	}
	bad := *m
	bad.Prompt = []int{3}
	if _, err := Enumerate(&bad); !errors.Is(err, ErrBadModel) {
		t.Errorf("prompt token 3 of V = 3: %v", err)
	}
}

package smc_test

import (
	"fmt"

	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/smc"
)

// The threshold of Fearnhead and Clifford for keeping 2 of the weights
// (1, 2, 3, 10): 10/16 is kept deterministically, the other three share
// the remaining slot with spacing α = (6/16)/1 = 1/c*.
func ExampleCStar() {
	c, kstar, m, _ := smc.CStar([]float64{1, 2, 3, 10}, 2, nil)
	fmt.Printf("c* = %.6f, stochastic %d of %d, α = %.6f\n", c, kstar, m, 1/c)
	// Output: c* = 2.666667, stochastic 3 of 4, α = 0.375000
}

// Algorithm 5 on a context-free model p = (0.5, 0.3, 0.2) with EOS = 0,
// T = 2, no token 2 and "ends within T": Z = 0.5 + 0.3·0.5 = 0.65, and
// the mean of Ẑ over 20000 runs (a fixed seed) is close to it.
func ExampleSampler_Run() {
	m := &smc.Model{Name: "fixed", LM: sim.Fixed{0.5, 0.3, 0.2}, EOS: 0, T: 2,
		Potentials: []smc.Potential{smc.Forbid{S: []int{2}}, smc.EndWithin{}}}
	ex, _ := smc.Enumerate(m)
	fc, _ := smc.LookupScheme("fc")
	sp, _ := smc.NewSampler(m, fc, smc.Config{N: 4, K: 2})
	sum := 0.0
	const runs = 20000
	for r := range runs {
		sum += sp.Run(sim.NewRand(1, sim.StreamID("example", uint64(r)))).ZHat
	}
	fmt.Printf("Z = %.2f, mean of Ẑ over %d runs = %.3f\n", ex.Z, runs, sum/runs)
	// Output: Z = 0.65, mean of Ẑ over 20000 runs = 0.649
}

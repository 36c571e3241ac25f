package source_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/specsim/specsim/internal/memcap"
	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/sim/source"
)

// FuzzSourceSpec: no source spec makes ParseSpec, Check or New panic;
// Check accepts exactly the specs New builds (except a dirichlet beta
// below what the pool reaches, found only by calibration); a built source
// yields blocks of finite probabilities. The memory budget is 16 MiB so
// the fuzzer stays fast, and New allocates at most four times it. Run with
//
//	go test ./sim/source -run '^$' -fuzz FuzzSourceSpec -fuzztime 30s
func FuzzSourceSpec(f *testing.F) {
	for _, s := range []string{"markov:V=4,order=1", "markov:V=4,order=1,a=0.01,seed=13", "markov:a=1e-9",
		"markov:V=64,order=3", "dirichlet:V=64,a=0.1,beta=0.7,contexts=2", "temperature:V=16,T=1e-300",
		"zipf:V=64,s=1e-3", "zipf:V=8,s=1e-300,sq=1e300", "dirichlet:V=4194304", "markov:V=4,,", "zipf:s=nan", ":", "markov:V=-1"} {
		f.Add(s, uint8(2))
	}
	const budget = 2 << 20 // small, so that no input takes seconds (a slow input at the end of -fuzztime fails the run with "context deadline exceeded")
	f.Fuzz(func(t *testing.T, spec string, g uint8) {
		gamma := int(g%8) + 1
		_, perr := source.ParseSpec(spec)
		cerr := source.Check(spec, gamma, budget)
		if perr != nil && cerr == nil {
			t.Fatalf("ParseSpec fails (%v) but Check accepts %q", perr, spec)
		}
		var src sim.Source
		var err error
		// the budget bounds what New takes; nothing else may allocate in
		// proportion to the spec (issue 23)
		memcap.Cap(t, 4*budget, fmt.Sprintf("New(%.60q)", spec), func() { src, err = source.New(spec, gamma, 1, budget) })
		if err != nil {
			return
		}
		if cerr != nil {
			t.Fatalf("Check refuses %q (%v) but New builds it", spec, cerr)
		}
		rng := sim.NewRand(1, 2)
		var b sim.Block
		for range 3 {
			if err := src.Next(rng, &b); err != nil {
				t.Fatalf("%q: Next: %v", spec, err)
			}
			for i := range b.P {
				s := 0.0
				for x := range b.P[i].Len() {
					v := b.P[i].At(x)
					if !(v >= 0 && v <= 1) {
						t.Fatalf("%q: p_%d(%d) = %v", spec, i, x, v)
					}
					s += v
				}
				if math.Abs(s-1) > 1e-5 {
					t.Fatalf("%q: p_%d sums to %v", spec, i, s)
				}
			}
		}
	})
}

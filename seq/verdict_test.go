package seq

import (
	"math/rand/v2"
	"testing"

	"github.com/specsim/specsim/sim/check"
	"github.com/specsim/specsim/sim/stattest"
)

// plantedVerdict feeds n positions of a uniform target over v tokens into
// a tally, each token drawn from π = p(1 ± 2δ) with the sign alternating
// between the B equal bins of the per-token tests: TV δ from the target,
// spread evenly over the bins, where the Pearson test's noncentrality is
// exactly 4n·δ² and the stated minimum detectable TV is exact.
func plantedVerdict(rng *rand.Rand, n int64, v int, delta float64, level, power float64) Verdict {
	return plantedIn(rng, n, v, bins(n, pitMaxBins), delta, level, power)
}

// plantedIn is plantedVerdict with the sign alternating between b equal
// bins (b = coarseBins: a deviation the coarse tests state exactly).
func plantedIn(rng *rand.Rand, n int64, v, b int, delta float64, level, power float64) Verdict {
	t := NewTally(v, false)
	p := make([]float64, v)
	for i := range p {
		p[i] = 1 / float64(v)
	}
	per := v / b
	for k := int64(0); k < n; k++ {
		if k%100 == 0 {
			t.StartPrompt()
		}
		var x int
		for {
			x = rng.IntN(v)
			s := 1.0
			if (x/per)%2 == 1 {
				s = -1
			}
			if rng.Float64()*(1+2*delta) < 1+2*delta*s {
				break
			}
		}
		t.Add(rng.Float64(), p, p, x)
	}
	return t.Verdict(level, power)
}

// A deviation of exactly the stated minimum detectable TV of the per-token
// tests is detected at least as often as the stated power 0.9 (over 60
// runs, no fewer than Binomial(60, 0.9) allows with probability 1-1e-3),
// and a lossless emission (δ = 0) gives the uniform counts the tests
// assume: the verdict is not_detected at the stated level.
func TestGenerateVerdictPower(t *testing.T) {
	t.Parallel()
	const n, v, runs = 6000, 256, 60
	rng := rand.New(rand.NewPCG(7, 7))
	base := plantedVerdict(rng, n, v, 0, 0.01, 0.9)
	if base.Verdict != check.NotDetected {
		t.Fatalf("lossless emission: %s (%s)", base.Verdict, base.Claim)
	}
	var tv float64
	for _, tt := range base.Tests {
		if tt.Name == "pit" {
			tv = tt.MinDetTV
			if m := float64(len(base.Tests)); len(base.Tests) != 7 || tt.LevelShare != 0.01/m {
				t.Errorf("pit's level share %g among %d tests, want the Holm share 0.01/7", tt.LevelShare, len(base.Tests))
			}
		}
	}
	hits := 0
	for range runs {
		if plantedVerdict(rng, n, v, tv, 0.01, 0.9).Verdict == check.Violated {
			hits++
		}
	}
	t.Logf("stated min TV %.4g: detected in %d of %d runs", tv, hits, runs)
	if lo, _ := stattest.BinomialAcceptance(runs, 0.9, 1e-3); hits < lo {
		t.Errorf("detected %d of %d at the stated TV; power 0.9 allows no fewer than %d", hits, runs, lo)
	}
	// the coarse test's stated TV, planted in its 8 bins
	tv = 0
	for _, tt := range base.Tests {
		if tt.Name == "pit-coarse" {
			tv = tt.MinDetTV
		}
	}
	hits = 0
	for range runs {
		if plantedIn(rng, n, v, coarseBins, tv, 0.01, 0.9).Verdict == check.Violated {
			hits++
		}
	}
	t.Logf("pit-coarse: stated min TV %.4g: detected in %d of %d runs", tv, hits, runs)
	if lo, _ := stattest.BinomialAcceptance(runs, 0.9, 1e-3); !(tv > 0) || hits < lo {
		t.Errorf("pit-coarse: detected %d of %d at the stated TV %.4g; power 0.9 allows no fewer than %d", hits, runs, tv, lo)
	}
}

// Under losslessness the tests' p-values are uniform, not piled up near 1
// as the old token test's were: over 200 lossless runs about a tenth of
// the pit test's p-values fall below 0.1 (Binomial(200, 0.1) at 1-1e-3).
func TestGenerateVerdictCalibrated(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 3))
	below := 0
	const runs = 200
	for range runs {
		if plantedVerdict(rng, 2000, 64, 0, 0.01, 0.9).Tests[0].PValue < 0.1 {
			below++
		}
	}
	if lo, hi := stattest.BinomialAcceptance(runs, 0.1, 1e-3); below < lo || below > hi {
		t.Errorf("%d of %d p-values below 0.1; Binomial(%d, 0.1) allows %d..%d", below, runs, runs, lo, hi)
	}
}

package stattest_test

import (
	"fmt"

	"github.com/specsim/specsim/sim/stattest"
)

func ExampleChiSquare() {
	// 100 draws from a die with four faces that should be fair.
	obs := []int64{10, 20, 30, 40}
	probs := []float64{0.25, 0.25, 0.25, 0.25}
	r, err := stattest.ChiSquare(obs, probs, stattest.DefaultMinExpected)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("X² = %g, df = %d, p = %.4g\n", r.Stat, r.DF, r.PValue)
	// Output:
	// X² = 20, df = 3, p = 0.0001697
}

func ExampleMinDetectableTV() {
	// Noncentrality needed by a 5%-level test on 1 df for 80% power, and the
	// smallest total-variation distance a 9-df test on 10000 observations
	// detects with that power.
	fmt.Printf("λ = %.4f\n", stattest.RequiredNoncentrality(1, 0.05, 0.8))
	fmt.Printf("TV = %.4f\n", stattest.MinDetectableTV(10000, 9, 0.05, 0.8))
	// Output:
	// λ = 7.8489
	// TV = 0.0198
}

func ExampleHolm() {
	fmt.Println(stattest.Holm([]float64{0.01, 0.04, 0.03, 0.005}))
	// Output:
	// [0.03 0.06 0.06 0.02]
}

package source

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/specsim/specsim/sim"
)

func init() {
	Register(Kind{
		Name:    "dirichlet",
		Summary: "synthetic pool: p ~ Dirichlet(a) per context and position, q a calibrated perturbation with mean sum min(p,q) = beta (V, a, beta, contexts, seed)",
		Keys: []Key{keyPoolV,
			{Name: "a", Default: "0.1", Doc: "Dirichlet concentration of the target rows, > 0 (small a: peaked rows)"},
			{Name: "beta", Default: "0.7", Doc: "target mean sum min(p,q) over the draft rows, in (0, 1]; the perturbation's sigma is calibrated to it"},
			keyContext},
		Quality: "beta",
		Parse: func(a *Args) (Config, error) {
			s := shape(a)
			return Dirichlet{Shape: s, A: a.Float("a"), Beta: a.Float("beta")}, nil
		},
	})
}

// Dirichlet is the config of kind dirichlet: a positional pool whose
// target rows are Dirichlet(A) draws and whose draft rows are log-normal
// perturbations q = norm(p·exp(σ z)), z ~ N(0, 1) per token, with σ
// calibrated so that the mean Σmin(p, q) over the draft rows is Beta.
type Dirichlet struct {
	Shape
	// A is the Dirichlet concentration of the target rows.
	A float64
	// Beta is the target mean Σmin(p, q) the perturbation is calibrated
	// to.
	Beta float64
	// CalibrationRows, when positive and below the pool's draft rows, is
	// the number of draft rows (the first) whose mean Σmin(p, q) the
	// calibration of σ evaluates; the pool's MeanBeta is then the mean over
	// every row, within sampling error of Beta rather than within calibTol.
	// A timing pool (BenchPool) sets it: its calibration evaluated the
	// whole 32 MiB pool a dozen times, and its rows' law is not what is
	// measured. Sources leave it 0 (every row), which their pinned rows
	// depend on.
	CalibrationRows int
}

// Check reports impossible parameters with the field to fix, then a pool
// above the memory budget.
func (c Dirichlet) Check() error {
	if err := c.validate("dirichlet"); err != nil {
		return err
	}
	if !(c.A > 0) {
		return fmt.Errorf("source dirichlet: a = %g; the concentration must be > 0", c.A)
	}
	if !(c.Beta > 0 && c.Beta <= 1) {
		return fmt.Errorf("source dirichlet: beta = %g; the target mean Σmin(p,q) must be in (0, 1]", c.Beta)
	}
	return c.checkMem("dirichlet", c.MemNeed())
}

// MemNeed returns the bytes Pool allocates at its peak (see Shape) with
// the normal noise of the perturbation, 8 B per draft row and token; -1
// if it overflows.
func (c Dirichlet) MemNeed() int64 {
	_, qRows := c.rows()
	return c.memNeed(sim.MulBytes(qRows, 8))
}

// Build implements Config.
func (c Dirichlet) Build(rng *rand.Rand) (sim.BlockSource, error) { return c.Pool(rng) }

// Pool draws the pool from rng: the target rows, then the noise, then σ
// by calibration. Its Sigma and MeanBeta are the calibrated σ and the
// mean Σmin(p, q) calibration reached.
func (c Dirichlet) Pool(rng *rand.Rand) (*sim.Pool, error) {
	if err := c.Check(); err != nil {
		return nil, err
	}
	pRows, qRows := c.rows()
	p64 := dirichletRows(rng, c.A, int(pRows), c.V)
	z := make([][]float64, qRows)
	for i := range z {
		z[i] = make([]float64, c.V)
		for x := range z[i] {
			z[i][x] = rng.NormFloat64()
		}
	}
	q64 := make([][]float64, qRows)
	for i := range q64 {
		q64[i] = make([]float64, c.V)
	}
	sigma, beta, filled, err := c.calibrate(p64, z, q64)
	if err != nil {
		return nil, err
	}
	if !filled || c.sampled(len(z)) { // a sample's calibration filled its own rows only
		for i := range q64 {
			perturb(q64[i], p64[c.pIndex(i)], z[i], sigma)
		}
	}
	pl := c.pool(p64, q64)
	pl.Sigma = sigma
	if !c.sampled(len(z)) {
		pl.MeanBeta = beta // else the pool's own mean over every row
	}
	return pl, nil
}

// sampled reports whether the calibration evaluates a sample of the n
// draft rows (CalibrationRows).
func (c Dirichlet) sampled(n int) bool { return c.CalibrationRows > 0 && c.CalibrationRows < n }

// perturb writes q = norm(p · exp(σ z)) into dst.
func perturb(dst, p, z []float64, sigma float64) []float64 {
	q, _ := perturbAlpha(dst, p, z, sigma)
	return q
}

// perturbAlpha writes q = norm(p · exp(σ z)) into dst (grown as needed)
// and returns it with Σmin(p, q), bit for bit sim.Normalize's q and
// sim.Alpha's sum, in two passes over the row instead of their four: the
// calibration evaluates it for every draft row at each trial σ.
func perturbAlpha(dst, p, z []float64, sigma float64) ([]float64, float64) {
	if cap(dst) < len(p) {
		dst = make([]float64, len(p))
	}
	dst = dst[:len(p)]
	s := 0.0
	for x := range p {
		dst[x] = p[x] * math.Exp(sigma*z[x])
		s += dst[x]
	}
	a := 0.0
	if s > 0 && !math.IsInf(s, 0) { // sim.Normalize's condition
		for x := range p {
			dst[x] /= s
			a += math.Min(p[x], dst[x])
		}
		return dst, a
	}
	for x := range p {
		a += math.Min(p[x], dst[x])
	}
	return dst, a
}

// calibTol is the tolerance of the σ calibration on the mean β.
const calibTol = 1e-4

// calibrate finds σ such that the mean over draft rows of Σ min(p, q) with
// q = norm(p·exp(σ z)) equals c.Beta within calibTol, by bisection on σ
// (the noise z is held fixed, common random numbers, so β(σ) is a smooth
// decreasing function of σ in practice). It returns σ and the achieved
// mean. Each trial σ writes the draft rows into q (one slice of length V
// per row of z); filled reports whether q holds them at the σ returned,
// the last σ tried, so that Pool need not compute them again.
func (c Dirichlet) calibrate(p64, z, q [][]float64) (sigma, beta float64, filled bool, err error) {
	if c.sampled(len(z)) {
		z, q = z[:c.CalibrationRows], q[:c.CalibrationRows] // Pool perturbs every row after
	}
	mean := func(sigma float64) float64 {
		s := 0.0
		for qi := range z {
			var a float64
			q[qi], a = perturbAlpha(q[qi], p64[c.pIndex(qi)], z[qi], sigma)
			s += a
		}
		return s / float64(len(z))
	}
	if c.Beta >= 1 {
		return 0, 1, false, nil
	}
	lo, hi := 0.0, 1.0
	bhi := mean(hi)
	for bhi > c.Beta {
		if hi >= 64 {
			return 0, 0, false, fmt.Errorf("source dirichlet: beta = %g is below the lowest mean Σmin(p,q) this pool reaches (%.4f at σ = 64); raise beta", c.Beta, bhi)
		}
		lo, hi = hi, hi*2
		bhi = mean(hi)
	}
	b := bhi
	for range 60 {
		mid := (lo + hi) / 2
		b = mean(mid)
		if math.Abs(b-c.Beta) < calibTol {
			return mid, b, true, nil
		}
		if b > c.Beta {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2, b, false, nil
}

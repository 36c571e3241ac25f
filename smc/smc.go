package smc

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/specsim/specsim/sim"
)

// Scheme is a resampling scheme of the SMC loop, correct or a planted bug.
type Scheme struct {
	Name    string
	Summary string
	// Mutant marks a planted bug: the check must flag it.
	Mutant bool
	kind   schemeKind
	fc     fcKind
	// noFactor drops the N/N' factor after resampling (mutant).
	noFactor bool
	// noReset keeps resampled children's own weights (mutant).
	noReset bool
}

type schemeKind int

const (
	kindFC schemeKind = iota
	kindIS
	kindMultinomial
	kindSystematic
	kindStratified
)

// Schemes lists every scheme: the algorithm as Lew et al. write it (fc),
// its bisection variant, the baselines and the mutants.
func Schemes() []Scheme {
	return []Scheme{
		{Name: "fc", Summary: "Algorithm 5: without-replacement resampling with exact c* (sort and scan) and α = Σ_stoch ŵ/(N − |I_det|)", kind: kindFC, fc: fcExact},
		{Name: "fc-bisect", Summary: "Algorithm 5 with c found by bisection to a relative tolerance (lower end)", kind: kindFC, fc: fcBisect},
		{Name: "is", Summary: "importance sampling: K = 1, no resampling", kind: kindIS},
		{Name: "multinomial", Summary: "multinomial resampling of N from the N' children, weights reset to the mean", kind: kindMultinomial},
		{Name: "systematic", Summary: "systematic resampling of N from the N' children, weights reset to the mean", kind: kindSystematic},
		{Name: "stratified", Summary: "stratified resampling of N from the N' children, weights reset to the mean", kind: kindStratified},
		{Name: "mutant-alpha-idet", Summary: "the seed's transcription α = Σ_stoch ŵ/|I_det| (planted bug)", Mutant: true, kind: kindFC, fc: fcTranscript},
		{Name: "mutant-no-factor", Summary: "the N/N' factor missing after resampling (planted bug)", Mutant: true, kind: kindFC, fc: fcExact, noFactor: true},
		{Name: "mutant-no-reset", Summary: "resampled particles keep their own weights instead of W/c* (planted bug)", Mutant: true, kind: kindFC, fc: fcExact, noReset: true},
		{Name: "mutant-findc-first", Summary: "LLaMPPL's find_c: the first split with g ≤ N, one past the consistent one (suspected library bug)", Mutant: true, kind: kindFC, fc: fcFindFirst},
	}
}

// LookupScheme returns the scheme called name.
func LookupScheme(name string) (Scheme, error) {
	var names []string
	for _, s := range Schemes() {
		if s.Name == name {
			return s, nil
		}
		names = append(names, s.Name)
	}
	return Scheme{}, fmt.Errorf("unknown scheme %q; schemes: %s", name, strings.Join(names, ", "))
}

// DefaultBisectTol is fc-bisect's relative bracket width.
const DefaultBisectTol = 1e-2

// MinBisectTol is the smallest bisection tolerance: four units in the last
// place of float64 (2^-50). A bracket [lo, hi] cannot be narrower than
// hi's spacing, about 2^-52·hi, so a smaller relative width would never
// be reached (1e-17 bisected for ever).
const MinBisectTol = 0x1p-50

// Config is one SMC run's size.
type Config struct {
	// N is the number of particles, K the expansion factor.
	N, K int
	// BisectTol is fc-bisect's tolerance (0: DefaultBisectTol).
	BisectTol float64
}

// Validate checks the sizes.
func (c Config) Validate(s Scheme) error {
	switch {
	case c.N < 1 || c.N > 1<<16:
		return fmt.Errorf("particles N = %d; use 1 <= N <= 65536", c.N)
	case c.K < 1 || c.K > 64:
		return fmt.Errorf("expansion factor K = %d; use 1 <= K <= 64", c.K)
	case s.kind == kindIS && c.K != 1:
		return fmt.Errorf("scheme is (importance sampling) has no expansion: use K = 1")
	case !(c.BisectTol == 0 || c.BisectTol >= MinBisectTol && c.BisectTol < 1): // NaN too
		return fmt.Errorf("bisection tolerance %g; use %g <= tol < 1 (0: %g): a relative width float64 can reach", c.BisectTol, MinBisectTol, DefaultBisectTol)
	}
	return nil
}

// Particle is one weighted string.
type Particle struct {
	Tokens   []int
	W        float64
	Finished bool
}

// Result is one run of the sampler. Its slices belong to the workspace and
// are overwritten by the next run.
type Result struct {
	// Particles is the weighted approximation of the posterior P.
	Particles []Particle
	// ZHat = (1/N)·Σ_i w_i, the estimate of Z.
	ZHat float64
	// ZHatT[t-1] is (1/N)·Σ_i w_i after iteration t, an estimate of Z_t;
	// once every particle is finished it stays at ZHat.
	ZHatT []float64
	// Sizes holds the population size after each resampling step (after
	// each step for is, which never resamples).
	Sizes []int
}

// workspace holds one worker's buffers; runs reuse it.
type workspace struct {
	m           *Model
	row, g, scr []float64
	ctx         []int
	// kernelOf holds the generated tokens whose kernel row and g hold
	// (valid when hasKernel): resampling leaves copies of a parent side by
	// side, and their kernel is computed once.
	kernelOf      []int
	hasKernel     bool
	parents, kids []Particle
	bufA, bufB    [][]int
	cw            []float64
	det           []bool
	order         []int
	cum           []float64
	sel           selection
	zt            []float64
	sizes         []int
}

// Sampler runs Algorithm 5 (or a baseline) on one model; it is not safe
// for concurrent use (make one per worker).
type Sampler struct {
	ws  *workspace
	s   Scheme
	cfg Config
}

// NewSampler returns a sampler for m with scheme s and sizes cfg.
func NewSampler(m *Model, s Scheme, cfg Config) (*Sampler, error) {
	if err := m.Validate(); err != nil {
		return nil, err
	}
	if err := cfg.Validate(s); err != nil {
		return nil, err
	}
	if cfg.BisectTol == 0 {
		cfg.BisectTol = DefaultBisectTol
	}
	v := m.Vocab()
	ws := &workspace{m: m, row: make([]float64, v), g: make([]float64, v), scr: make([]float64, v), zt: make([]float64, m.T)}
	return &Sampler{ws: ws, s: s, cfg: cfg}, nil
}

// Run runs the sampler once with randomness from rng:
//
//  1. x_i = s_0, w_i = 1 for i = 1..N;
//  2. while some particle is unfinished: K_i = K for unfinished and 1 for
//     finished particles, N' = Σ K_i; a finished particle is carried with
//     weight w_i·N'/N, an unfinished one gets K children x_{i,k} ~ M_t(·|x_i)
//     with weights w_i·G_t(x_i, x_{i,k})·N'/(K·N);
//  3. the N' children are resampled to N (scheme), each kept child's
//     weight multiplied by N/N';
//  4. Ẑ = (1/N)·Σ_i w_i.
//
// Each kernel step draws one uniform per child (inverse CDF); the
// resampler draws its own (fc: one; systematic: one; multinomial and
// stratified: N).
func (sp *Sampler) Run(rng *rand.Rand) Result {
	ws, N, K := sp.ws, sp.cfg.N, sp.cfg.K
	T := ws.m.T
	ws.parents = growParticles(ws.parents, N, &ws.bufA, T)
	for i := range ws.parents {
		ws.parents[i] = Particle{Tokens: ws.bufA[i][:0], W: 1}
	}
	ws.sizes = ws.sizes[:0]
	for t := range ws.zt {
		ws.zt[t] = 0
	}
	Nf := float64(N)
	for t := 1; t <= T; t++ {
		unfinished := 0
		for _, p := range ws.parents {
			if !p.Finished {
				unfinished++
			}
		}
		if unfinished == 0 {
			ws.zt[t-1] = ws.zt[t-2]
			continue
		}
		Np := len(ws.parents) - unfinished + K*unfinished
		total := sp.extend(rng, Np)
		if !(total > 0) {
			// Every weight is 0: Ẑ = 0 and the run ends.
			ws.parents = ws.parents[:0]
			for u := t; u <= T; u++ {
				ws.zt[u-1] = 0
			}
			return Result{Particles: ws.parents, ZHat: 0, ZHatT: ws.zt, Sizes: ws.sizes}
		}
		if sp.s.kind == kindIS {
			ws.parents, ws.kids = ws.kids, ws.parents
			ws.bufA, ws.bufB = ws.bufB, ws.bufA
			ws.zt[t-1] = total / Nf
			ws.sizes = append(ws.sizes, len(ws.parents))
			continue
		}
		ws.zt[t-1] = sp.resample(rng, Np) / Nf
	}
	z := 0.0
	for _, p := range ws.parents {
		z += p.W
	}
	return Result{Particles: ws.parents, ZHat: z / Nf, ZHatT: ws.zt, Sizes: ws.sizes}
}

// extend is step 2 of Run: it fills ws.kids with the Np children of the
// parents (a finished parent carried, an unfinished one given K children
// drawn from its kernel, one uniform each) and ws.cw with their weights,
// and returns the weights' total.
func (sp *Sampler) extend(rng *rand.Rand, Np int) float64 {
	ws, m, N, K := sp.ws, sp.ws.m, sp.cfg.N, sp.cfg.K
	T := m.T
	Nf, Npf := float64(N), float64(Np)
	ws.kids = growParticles(ws.kids, Np, &ws.bufB, T)
	ws.cw = ws.cw[:0]
	j := 0
	for _, p := range ws.parents {
		if p.Finished {
			ws.kids[j] = Particle{Tokens: append(ws.bufB[j][:0], p.Tokens...), W: p.W * Npf / Nf, Finished: true}
			ws.cw = append(ws.cw, ws.kids[j].W)
			j++
			continue
		}
		if !ws.hasKernel || !slices.Equal(ws.kernelOf, p.Tokens) {
			ws.ctx = m.kernel(p.Tokens, ws.ctx, ws.row, ws.g, ws.scr)
			ws.kernelOf, ws.hasKernel = append(ws.kernelOf[:0], p.Tokens...), true
		}
		for range K {
			x := sim.SampleCDF(rng.Float64(), ws.row)
			toks := append(append(ws.bufB[j][:0], p.Tokens...), x)
			w := p.W * ws.g[x] * Npf / (float64(K) * Nf)
			ws.kids[j] = Particle{Tokens: toks, W: w, Finished: x == m.EOS || len(toks) == T}
			ws.cw = append(ws.cw, w)
			j++
		}
	}
	total := 0.0
	for _, w := range ws.cw {
		total += w
	}
	return total
}

// resample is step 3 of Run: it resamples the Np children to the new
// parents by the scheme, each kept child's weight multiplied by N/Np
// (unless the scheme drops the factor), records the population size and
// returns the parents' total weight.
func (sp *Sampler) resample(rng *rand.Rand, Np int) float64 {
	ws, N := sp.ws, sp.cfg.N
	sel := &ws.sel
	switch sp.s.kind {
	case kindFC:
		resampleFC(rng, ws.cw, N, sp.s.fc, sp.cfg.BisectTol, sp.s.noReset, ws, sel)
	case kindMultinomial:
		resampleMultinomial(rng, ws.cw, N, ws, sel)
	case kindSystematic:
		resampleSystematic(rng, ws.cw, N, false, ws, sel)
	case kindStratified:
		resampleSystematic(rng, ws.cw, N, true, ws, sel)
	}
	factor := float64(N) / float64(Np)
	if sp.s.noFactor {
		factor = 1
	}
	ws.parents = growParticles(ws.parents, len(sel.idx), &ws.bufA, ws.m.T)
	sum := 0.0
	for r, i := range sel.idx {
		k := ws.kids[i]
		ws.parents[r] = Particle{Tokens: append(ws.bufA[r][:0], k.Tokens...), W: sel.w[r] * factor, Finished: k.Finished || sel.dead[r]}
		sum += ws.parents[r].W
	}
	ws.sizes = append(ws.sizes, len(sel.idx))
	return sum
}

// growParticles resizes ps to n, growing the token buffers (capacity T).
func growParticles(ps []Particle, n int, bufs *[][]int, T int) []Particle {
	for len(*bufs) < n {
		*bufs = append(*bufs, make([]int, 0, T))
	}
	if cap(ps) < n {
		ps = make([]Particle, n)
	}
	return ps[:n]
}

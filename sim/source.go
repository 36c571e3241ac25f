package sim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/stat/distuv"
)

// Spec is a parsed source description "kind:key=value,key=value".
type Spec struct {
	Kind string
	Args map[string]string
}

// ParseSpec parses "kind:k=v,k=v". Keys may not repeat; values are kept as
// strings for the constructor to interpret.
func ParseSpec(s string) (Spec, error) {
	kind, rest, _ := strings.Cut(strings.TrimSpace(s), ":")
	if kind == "" {
		return Spec{}, fmt.Errorf("source %q: missing kind; write kind:key=value,... (kinds: %s)", s, strings.Join(SourceKinds(), ", "))
	}
	sp := Spec{Kind: kind, Args: map[string]string{}}
	if strings.TrimSpace(rest) == "" {
		return sp, nil
	}
	for _, kv := range strings.Split(rest, ",") {
		k, v, ok := strings.Cut(kv, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok || k == "" || v == "" {
			return Spec{}, fmt.Errorf("source %q: %q is not key=value", s, kv)
		}
		if _, dup := sp.Args[k]; dup {
			return Spec{}, fmt.Errorf("source %q: key %s given twice", s, k)
		}
		sp.Args[k] = v
	}
	return sp, nil
}

// String renders the spec canonically (keys sorted).
func (sp Spec) String() string {
	keys := make([]string, 0, len(sp.Args))
	for k := range sp.Args {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + sp.Args[k]
	}
	return sp.Kind + ":" + strings.Join(parts, ",")
}

// SourceKinds lists the kinds NewSource understands.
func SourceKinds() []string { return []string{"dirichlet", "markov", "temperature", "zipf"} }

// args reads typed values from a spec, remembering the first error and
// which keys were used so unknown keys can be reported.
type args struct {
	sp   Spec
	used map[string]bool
	err  error
}

func (a *args) float(k string, def float64) float64 {
	return arg(a, k, def, "a finite number", func(s string) (float64, error) {
		v, err := strconv.ParseFloat(s, 64)
		if err == nil && (math.IsNaN(v) || math.IsInf(v, 0)) {
			err = strconv.ErrRange
		}
		return v, err
	})
}

func (a *args) int(k string, def int) int {
	return arg(a, k, def, "an integer", strconv.Atoi)
}

func (a *args) uint64(k string, def uint64) uint64 {
	return arg(a, k, def, "a non-negative integer", func(s string) (uint64, error) { return strconv.ParseUint(s, 10, 64) })
}

// arg marks k used and returns its value read by parse, or def when the
// spec does not give it; a value parse rejects is remembered as the error
// "k=value is not <what>".
func arg[T any](a *args, k string, def T, what string, parse func(string) (T, error)) T {
	a.used[k] = true
	s, ok := a.sp.Args[k]
	if !ok {
		return def
	}
	v, err := parse(s)
	if err != nil {
		a.fail("source %s: %s=%q is not %s", a.sp.Kind, k, s, what)
	}
	return v
}

func (a *args) fail(format string, v ...any) {
	if a.err == nil {
		a.err = fmt.Errorf(format, v...)
	}
}

func (a *args) done(keys string) error {
	if a.err != nil {
		return a.err
	}
	for k := range a.sp.Args {
		if !a.used[k] {
			return fmt.Errorf("source %s: unknown key %q; it takes %s", a.sp.Kind, k, keys)
		}
	}
	return nil
}

// Source is what a spec builds: a block source named by its canonical
// spec. The source is a *Chain over a small context-dependent model pair
// (markov; PairOf gives the pair) or a positional *Pool of large synthetic
// rows (dirichlet, temperature, zipf; PoolOf gives the pool).
type Source struct {
	Spec string
	BlockSource
}

// NewSource builds the source described by spec, drafting γ = gamma tokens
// per block (pools hold γ draft rows and γ+1 target rows per context).
// seed is used where the spec gives no seed= of its own.
func NewSource(spec string, gamma int, seed uint64) (Source, error) {
	sc, err := parseSource(spec, gamma, seed)
	if err != nil {
		return Source{}, err
	}
	src := Source{Spec: sc.spec}
	rng := NewRand(sc.seed, StreamID("source/"+sc.kind))
	if sc.markov != nil {
		pr, err := NewMarkovPair(rng, *sc.markov)
		if err != nil {
			return Source{}, err
		}
		pr.Name = src.Spec
		ch, err := NewChain(pr, gamma)
		if err != nil {
			return Source{}, err
		}
		src.BlockSource = ch
		return src, nil
	}
	pl, err := NewPool(rng, *sc.pool)
	if err != nil {
		return Source{}, err
	}
	pl.Name = src.Spec
	src.BlockSource = pl
	return src, nil
}

// CheckSource reports every error NewSource(spec, gamma, ·) would return
// for its parameters, memory budget included, without drawing or
// allocating the source: sweep specs call it for every cell when they are
// loaded. (A pool's calibration to its beta can still fail when built.)
func CheckSource(spec string, gamma int) error {
	sc, err := parseSource(spec, gamma, 0)
	if err != nil {
		return err
	}
	if sc.markov != nil {
		if gamma < 1 || gamma > MaxGamma {
			return fmt.Errorf("source %s: gamma = %d; use 1 <= gamma <= %d", sc.spec, gamma, MaxGamma)
		}
		if err := sc.markov.Validate(); err != nil {
			return err
		}
		return sc.markov.checkMem()
	}
	if err := sc.pool.Validate(); err != nil {
		return err
	}
	return sc.pool.checkMem()
}

// sourceConfig is a parsed source spec: its canonical text, seed, and the
// configuration of its kind.
type sourceConfig struct {
	spec, kind string
	seed       uint64
	markov     *MarkovConfig
	pool       *PoolConfig
}

func parseSource(spec string, gamma int, seed uint64) (sourceConfig, error) {
	sp, err := ParseSpec(spec)
	if err != nil {
		return sourceConfig{}, err
	}
	a := &args{sp: sp, used: map[string]bool{}}
	sc := sourceConfig{spec: sp.String(), kind: sp.Kind, seed: a.uint64("seed", seed)}
	switch sp.Kind {
	case "markov":
		c := MarkovConfig{V: a.int("V", 4), Order: a.int("order", 1), A: a.float("a", 0.5), Quality: a.float("quality", 0.5)}
		if err := a.done("V, order, a, quality, seed"); err != nil {
			return sourceConfig{}, err
		}
		sc.markov = &c
		return sc, nil
	case "dirichlet", "temperature", "zipf":
		pc := PoolConfig{Kind: sp.Kind, V: a.int("V", 1000), Gamma: gamma, Contexts: a.int("contexts", 16),
			A: a.float("a", 0.1), Beta: a.float("beta", 0.7), T: a.float("T", 1.5), S: a.float("s", 1.1), SQ: a.float("sq", 1.3)}
		keys := map[string]string{"dirichlet": "V, a, beta, contexts, seed", "temperature": "V, a, T, contexts, seed", "zipf": "V, s, sq, contexts, seed"}[sp.Kind]
		if err := a.done(keys); err != nil {
			return sourceConfig{}, err
		}
		sc.pool = &pc
		return sc, nil
	}
	return sourceConfig{}, fmt.Errorf("source %q: unknown kind %q; kinds: %s", spec, sp.Kind, strings.Join(SourceKinds(), ", "))
}

// PoolConfig describes a positional synthetic pool.
type PoolConfig struct {
	// Kind is "dirichlet", "temperature" or "zipf".
	Kind string
	// V is the vocabulary size, Gamma the draft length, Contexts the
	// number of independent contexts.
	V, Gamma, Contexts int
	// A is the Dirichlet concentration of target rows (dirichlet,
	// temperature).
	A float64
	// Beta is the target mean Σ min(p, q) the log-normal perturbation is
	// calibrated to (dirichlet).
	Beta float64
	// T is the draft temperature: q = norm(p^(1/T)) (temperature).
	T float64
	// S and SQ are the Zipf exponents of target and draft (zipf).
	S, SQ float64
}

// Pool is a positional model pair over a large vocabulary: for context c
// and position i (0-based) the target row is P[c*(γ+1)+i] and the draft row
// Q[c*γ+i], whatever tokens precede. Under this model the target law of a
// step's first γ+1 tokens is the product of its rows, which is what the
// statistical check tests. Rows are float32, as logged rows are.
type Pool struct {
	Name               string
	V, Gamma, Contexts int
	P, Q               [][]float32
	Sigma, MeanBeta    float64 // dirichlet: the calibrated σ and the achieved mean β
	draftAlias         []*Alias
}

// Validate reports impossible parameters with the field to fix.
func (c PoolConfig) Validate() error {
	switch {
	case c.V < 2 || c.V > 1<<22:
		return fmt.Errorf("source %s: V = %d; use 2 <= V <= %d", c.Kind, c.V, 1<<22)
	case c.Gamma < 1 || c.Gamma > MaxGamma:
		return fmt.Errorf("source %s: gamma = %d; use 1 <= gamma <= %d", c.Kind, c.Gamma, MaxGamma)
	case c.Contexts < 1 || c.Contexts > 1<<16:
		return fmt.Errorf("source %s: contexts = %d; use 1 <= contexts <= 65536", c.Kind, c.Contexts)
	}
	switch c.Kind {
	case "dirichlet":
		if !(c.A > 0) {
			return fmt.Errorf("source dirichlet: a = %g; the concentration must be > 0", c.A)
		}
		if !(c.Beta > 0 && c.Beta <= 1) {
			return fmt.Errorf("source dirichlet: beta = %g; the target mean Σmin(p,q) must be in (0, 1]", c.Beta)
		}
	case "temperature":
		if !(c.A > 0) {
			return fmt.Errorf("source temperature: a = %g; the concentration must be > 0", c.A)
		}
		if !(c.T > 0) {
			return fmt.Errorf("source temperature: T = %g; the temperature must be > 0", c.T)
		}
	case "zipf":
		if !(c.S > 0) || !(c.SQ > 0) {
			return fmt.Errorf("source zipf: s = %g, sq = %g; both exponents must be > 0", c.S, c.SQ)
		}
	default:
		return fmt.Errorf("source: unknown pool kind %q", c.Kind)
	}
	return nil
}

// MemNeed returns the bytes NewPool allocates at its peak: per token, the
// float32 rows (4 B each: C·(γ+1) target and C·γ draft rows), their float64
// drafts while they are drawn (8 B each), the dirichlet noise (8 B per
// draft row), zipf's rankings (8 B per target row) and the draft alias tables (12 B per draft row), with C =
// Contexts; -1 if it overflows.
func (c PoolConfig) MemNeed() int64 {
	pRows, qRows := int64(c.Contexts)*int64(c.Gamma+1), int64(c.Contexts)*int64(c.Gamma)
	perToken := MulBytes(pRows, 4+8) + MulBytes(qRows, 4+8+12)
	switch c.Kind {
	case "dirichlet":
		perToken += MulBytes(qRows, 8)
	case "zipf":
		perToken += MulBytes(pRows, 8) // the ranking of every target row
	}
	return MulBytes(int64(c.V), perToken)
}

func (c PoolConfig) checkMem() error {
	return CheckMem(fmt.Sprintf("source %s: V = %d × contexts = %d × γ = %d", c.Kind, c.V, c.Contexts, c.Gamma),
		c.MemNeed(), "lower V or contexts")
}

// calibTol is the tolerance of the σ calibration on the mean β.
const calibTol = 1e-4

// NewPool draws a pool from rng.
func NewPool(rng *rand.Rand, c PoolConfig) (*Pool, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	if err := c.checkMem(); err != nil {
		return nil, err
	}
	pl := &Pool{V: c.V, Gamma: c.Gamma, Contexts: c.Contexts,
		P: make([][]float32, c.Contexts*(c.Gamma+1)), Q: make([][]float32, c.Contexts*c.Gamma)}
	p64 := make([][]float64, len(pl.P))
	switch c.Kind {
	case "dirichlet", "temperature":
		g := distuv.Gamma{Alpha: c.A, Beta: 1, Src: rng}
		for i := range p64 {
			p64[i] = make([]float64, c.V)
			for x := range p64[i] {
				p64[i][x] = g.Rand()
			}
			if Normalize(p64[i]) <= 0 {
				p64[i][rng.IntN(c.V)] = 1 // every gamma draw underflowed
			}
		}
	case "zipf":
		for i := range p64 {
			p64[i] = zipfRow(rng.Perm(c.V), c.S)
		}
	}
	q64 := make([][]float64, len(pl.Q))
	switch c.Kind {
	case "dirichlet":
		z := make([][]float64, len(pl.Q))
		for i := range z {
			z[i] = make([]float64, c.V)
			for x := range z[i] {
				z[i][x] = rng.NormFloat64()
			}
		}
		sigma, beta, err := calibrate(p64, z, c)
		if err != nil {
			return nil, err
		}
		pl.Sigma, pl.MeanBeta = sigma, beta
		for i := range q64 {
			q64[i] = perturb(nil, p64[pl.pIndex(i)], z[i], sigma)
		}
	case "temperature":
		for i := range q64 {
			q64[i] = Temperature(nil, p64[pl.pIndex(i)], c.T)
		}
	case "zipf":
		for i := range q64 {
			q64[i] = zipfLike(p64[pl.pIndex(i)], c.S, c.SQ)
		}
	}
	for i := range p64 {
		pl.P[i] = toFloat32(p64[i])
	}
	for i := range q64 {
		pl.Q[i] = toFloat32(q64[i])
	}
	if pl.MeanBeta == 0 {
		pl.MeanBeta = pl.meanBeta()
	}
	pl.buildAliases()
	return pl, nil
}

// pIndex maps a draft-row index to the target row of the same position.
func (pl *Pool) pIndex(qi int) int {
	c, i := qi/pl.Gamma, qi%pl.Gamma
	return c*(pl.Gamma+1) + i
}

func (pl *Pool) meanBeta() float64 {
	s := 0.0
	for qi, q := range pl.Q {
		p := pl.P[pl.pIndex(qi)]
		for x := range q {
			s += math.Min(float64(p[x]), float64(q[x]))
		}
	}
	return s / float64(len(pl.Q))
}

// PRow and QRow return context c's target row at position i (0..γ) and
// draft row at position i (0..γ-1).
func (pl *Pool) PRow(c, i int) []float32 { return pl.P[c*(pl.Gamma+1)+i] }

// QRow returns context c's draft row at position i.
func (pl *Pool) QRow(c, i int) []float32 { return pl.Q[c*pl.Gamma+i] }

// Next draws a context c uniformly with rng and fills dst from it as Fill
// does. A pool never runs out, so Next never returns an error; it
// implements BlockSource and is safe for concurrent use with distinct rngs
// and dsts.
func (pl *Pool) Next(rng *rand.Rand, dst *Block) error {
	pl.Fill(rng, rng.IntN(pl.Contexts), dst)
	return nil
}

// Fill points dst's rows at context c, sets dst.Ctx = c, and draws the
// draft tokens from the draft rows with rng (alias tables built by
// NewPool, O(1) per token). dst's slices are reused; Fill does not
// allocate once they have length γ. It only reads the pool, so concurrent
// calls with distinct rngs and dsts are safe; the rows must not be
// modified after NewPool.
func (pl *Pool) Fill(rng *rand.Rand, c int, dst *Block) {
	g := pl.Gamma
	if cap(dst.Tokens) < g {
		dst.Tokens = make([]int, g)
		dst.Q = make([]Row, g)
		dst.P = make([]Row, g+1)
	}
	dst.Tokens, dst.Q, dst.P = dst.Tokens[:g], dst.Q[:g], dst.P[:g+1]
	dst.Ctx = c
	for i := 0; i < g; i++ {
		dst.Q[i] = F32(pl.QRow(c, i))
		dst.Tokens[i] = pl.draftAlias[c*g+i].Sample(rng)
	}
	for i := 0; i <= g; i++ {
		dst.P[i] = F32(pl.PRow(c, i))
	}
}

// PoolFromRows returns a pool over the given rows (context c's target row
// at position i is p[c*(γ+1)+i], its draft row q[c*γ+i]) with its alias
// tables built, for callers that derive a pool from another one (a
// sampling transform, say). Every row must have length V and be a valid
// distribution; the rows must not be modified afterwards.
func PoolFromRows(name string, gamma int, p, q [][]float32) (*Pool, error) {
	if gamma < 1 || len(q) == 0 || len(q)%gamma != 0 || len(p) != len(q)/gamma*(gamma+1) {
		return nil, fmt.Errorf("pool %s: %d target and %d draft rows do not form contexts of γ = %d", name, len(p), len(q), gamma)
	}
	v := len(p[0])
	buf := make([]float64, v)
	for i, rows := range [][][]float32{p, q} {
		kind := [2]string{"target", "draft"}[i]
		for j, r := range rows {
			if len(r) != v {
				return nil, fmt.Errorf("pool %s: %s row %d has %d entries, row 0 has %d", name, kind, j, len(r), v)
			}
			if err := Validate(fmt.Sprintf("pool %s %s row %d", name, kind, j), Float64s(buf, r)); err != nil {
				return nil, err
			}
		}
	}
	pl := &Pool{Name: name, V: v, Gamma: gamma, Contexts: len(q) / gamma, P: p, Q: q}
	pl.buildAliases()
	pl.MeanBeta = pl.meanBeta()
	return pl, nil
}

// buildAliases builds the draft alias tables; NewPool calls it once.
func (pl *Pool) buildAliases() {
	pl.draftAlias = make([]*Alias, len(pl.Q))
	w := make([]float64, pl.V)
	for i, q := range pl.Q {
		pl.draftAlias[i] = NewAlias(Float64s(w, q))
	}
}

func toFloat32(p []float64) []float32 {
	out := make([]float32, len(p))
	for i, v := range p {
		out[i] = float32(v)
	}
	return out
}

// perturb writes q = norm(p · exp(σ z)) into dst.
func perturb(dst, p, z []float64, sigma float64) []float64 {
	dst = grow(dst, len(p))
	for x := range p {
		dst[x] = p[x] * math.Exp(sigma*z[x])
	}
	Normalize(dst)
	return dst
}

// calibrate finds σ such that the mean over draft rows of Σ min(p, q) with
// q = norm(p·exp(σ z)) equals c.Beta within calibTol, by bisection on σ
// (the noise z is held fixed, common random numbers, so β(σ) is a smooth
// decreasing function of σ in practice). It returns σ and the achieved mean.
func calibrate(p64, z [][]float64, c PoolConfig) (float64, float64, error) {
	pIdx := func(qi int) int { return qi/c.Gamma*(c.Gamma+1) + qi%c.Gamma }
	buf := make([]float64, c.V)
	mean := func(sigma float64) float64 {
		s := 0.0
		for qi := range z {
			p := p64[pIdx(qi)]
			q := perturb(buf, p, z[qi], sigma)
			s += Alpha(p, q)
		}
		return s / float64(len(z))
	}
	if c.Beta >= 1 {
		return 0, 1, nil
	}
	lo, hi := 0.0, 1.0
	bhi := mean(hi)
	for bhi > c.Beta {
		if hi >= 64 {
			return 0, 0, fmt.Errorf("source dirichlet: beta = %g is below the lowest mean Σmin(p,q) this pool reaches (%.4f at σ = 64); raise beta", c.Beta, bhi)
		}
		lo, hi = hi, hi*2
		bhi = mean(hi)
	}
	b := bhi
	for range 60 {
		mid := (lo + hi) / 2
		b = mean(mid)
		if math.Abs(b-c.Beta) < calibTol {
			return mid, b, nil
		}
		if b > c.Beta {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2, b, nil
}

// zipfRow returns p(perm[r]) ∝ (r+1)^-s: a Zipf law over a random ranking.
func zipfRow(perm []int, s float64) []float64 {
	p := make([]float64, len(perm))
	for r, x := range perm {
		p[x] = math.Pow(float64(r+1), -s) // the rank-1 entry is 1, so the sum is >= 1
	}
	Normalize(p)
	return p
}

// zipfLike returns the Zipf law with exponent sq over the ranking of p.
func zipfLike(p []float64, s, sq float64) []float64 {
	q := make([]float64, len(p))
	for x, v := range p {
		// p(x) ∝ (r+1)^-s, so (r+1)^-sq ∝ p(x)^(sq/s).
		q[x] = math.Pow(v, sq/s)
		if q[x] == 0 && v > 0 {
			return zipfLikeLog(q, p, sq/s)
		}
	}
	if z := Normalize(q); !(z > 0) || math.IsInf(z, 0) {
		return zipfLikeLog(q, p, sq/s)
	}
	return q
}

// zipfLikeLog computes q ∝ p^k in log space, q(x) = exp(k·(log p(x) -
// log max p)), for the rows where the direct power under- or overflows
// (zipf:s=1e-3 makes k = sq/s = 1300, and (1/64)^1300 is 0 in float64).
// Rows whose powers are representable keep the direct computation, so
// their numbers are unchanged.
func zipfLikeLog(q, p []float64, k float64) []float64 {
	lm := math.Log(p[Argmax(p)])
	for x, v := range p {
		switch d := math.Log(v) - lm; {
		case v <= 0:
			q[x] = 0
		case d == 0:
			q[x] = 1 // also when k is +Inf
		default:
			q[x] = math.Exp(k * d)
		}
	}
	Normalize(q)
	return q
}

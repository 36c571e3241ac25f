package experiments

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/specsim/specsim/algos"
	"github.com/specsim/specsim/plots"
	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/sim/run"
	"github.com/specsim/specsim/sim/source"
	"github.com/specsim/specsim/sim/stattest"
	"github.com/specsim/specsim/table"
)

// block-vs-token compares the expected number of tokens emitted per step
// by token verification (algos.Token) and block verification (algos.Block)
// over γ = 1..8 and draft quality (mean β = Σmin(p, q) from 0.3 to 0.9).
//
// Cells: source × beta_target, with source one of
//
//   - "markov:V=4,order=1" and "markov:V=4,order=2": a random
//     context-dependent Markov pair (target rows Dirichlet(0.5); draft rows
//     q = Q·p + (1-Q)·e_m with e_m one-hot at the token m the target row
//     likes least, so that β down to mean min p ≤ 1/4 is reachable, and Q
//     found by bisection so that the mean of β over all states is
//     beta_target). The chain is drawn from the master seed and the order
//     only, so along the β axis only Q changes. Kind "exact": sim.Exact enumerates
//     all 4^γ drafts from the start state, no sampling error (V = 4 keeps
//     γ = 8 enumerable: 65536 drafts).
//   - "dirichlet:V=2048": a positional pool from source.New
//     ("dirichlet:V=2048,a=0.1,beta=<beta_target>,contexts=64", σ
//     calibrated to the mean β), built for γ = 8 from the master seed
//     alone (the same rows and noise for every beta_target, only σ
//     differs); a step at γ < 8 uses its first γ positions. Kind "mc": cfg.Trials(20000) steps per γ, paired
//     by common random numbers: trial i draws its context and draft from
//     the stream ("block-vs-token/draft", γ, i) and both rules take their
//     coins from one fresh generator on the stream ("block-vs-token/coins",
//     γ, i), so they see the same drafts and the same uniforms.
//
// Rows, three per (cell, γ), all with the same columns:
//
//	gamma          draft length γ
//	rule           "token", "block", or "gain" (block - token)
//	kind           "exact" or "mc"
//	model          the pair or pool actually used (with its fitted knob)
//	beta_measured  exact: the mean over positions 1..γ of E[β] along the
//	               draft path (drafts from q, from the start state);
//	               mc: the mean β of the pool's rows at positions 1..γ
//	eq1            Eq. 1, (1 - α^(γ+1))/(1 - α) at α = beta_measured
//	mean_emitted   E[emitted tokens per step] (gain rows: the mean paired
//	               difference block - token)
//	ci_lo, ci_hi   95% normal interval (exact: equal to the mean; gain
//	               rows: from the paired differences)
//	trials         Monte Carlo steps (0 for exact)
//	gain_pct       100·(block/token - 1) on block and gain rows, 0 on
//	               token rows
//
// Reading it: on the positional pool the positions are independent, so
// token verification's mean is Eq. 1 up to the pool's finite sample (the
// i.i.d. formula holds); on the Markov pairs β depends on the context the
// draft walked into, and token's exact value departs from Eq. 1 at the
// draft-path mean β. Block verification's gain grows with γ and with draft
// quality.
const (
	bvtMaxGamma = 8
	bvtTrials   = 20000
	bvtPoolV    = 2048
	bvtMarkovV  = 4
	bvtMarkovA  = 0.5
)

var bvtSources = []string{"markov:V=4,order=1", "markov:V=4,order=2", "dirichlet:V=2048"}

func init() {
	Register(Experiment{
		Name:    "block-vs-token",
		Main:    40,
		Section: "Block vs token verification",
		Summary: "E[emitted tokens/step] of token vs block verification over gamma = 1..8 and mean beta 0.3..0.9 (exact Markov pairs, paired Monte Carlo on pools)",
		Cells: func(Config) ([]Cell, error) {
			var cells []Cell
			for _, s := range bvtSources {
				for b := 3; b <= 9; b++ {
					cells = append(cells, Cell{Key: []KV{{K: "source", V: s}, {K: "beta_target", V: float64(b) / 10}}})
				}
			}
			return cells, nil
		},
		Run:     runBlockVsToken,
		Figures: []Figure{{Name: "block-vs-token", Make: plots.BlockVsToken}},
		Tables:  []Table{{Name: "block-vs-token", Make: blockTable}},
		Numbers: []table.Number{
			{Macro: "BlockLowBeta", Where: blockSlice("0.3"), Col: "beta_measured", Digits: 2, Doc: "measured β of the low-quality pool"},
			{Macro: "BlockGainLow", Where: blockSlice("0.3"), Col: "gain_pct", Digits: 1, Doc: "block gain % at γ = 4, low β"},
			{Macro: "BlockHighBeta", Where: blockSlice("0.9"), Col: "beta_measured", Digits: 2, Doc: "measured β of the high-quality pool"},
			{Macro: "BlockGainHigh", Where: blockSlice("0.9"), Col: "gain_pct", Digits: 1, Doc: "block gain % at γ = 4, high β"},
			{Macro: "BlockNegative", Where: []string{"kind", "mc", "rule", "gain"}, Agg: table.Negative, Col: "ci_hi", Doc: "Monte Carlo gain rows whose 95% interval lies below −1e-9"},
			{Macro: "BlockGainRows", Where: []string{"kind", "mc", "rule", "gain"}, Agg: table.Count, Doc: "Monte Carlo gain rows"},
		},
	})
}

func runBlockVsToken(ctx context.Context, cfg Config, c Cell, seed uint64) ([]Row, error) {
	beta, err := cellFloat(c, "beta_target")
	if err != nil {
		return nil, err
	}
	src := Row(c.Key).String("source")
	switch src {
	case "markov:V=4,order=1", "markov:V=4,order=2":
		order := 1
		if src == "markov:V=4,order=2" {
			order = 2
		}
		// The target chain (and the draft's noise) depends on the master
		// seed and the order only, so the cells of one source differ in Q
		// alone: common random numbers along the β axis.
		pair, err := bvtMarkovPair(sim.NewRand(cfg.Seed, sim.StreamID("block-vs-token/pair", uint64(order))), order, beta)
		if err != nil {
			return nil, err
		}
		return bvtExact(ctx, pair)
	case "dirichlet:V=2048":
		// Likewise the pool's rows and noise come from the master seed
		// alone; only its calibrated σ changes with beta_target.
		pl, err := bvtPool(beta, bvtMaxGamma, sim.StreamID("block-vs-token/pool", cfg.Seed), cfg.MemBudget)
		if err != nil {
			return nil, err
		}
		return bvtMC(ctx, cfg, pl, seed, 1, bvtMaxGamma)
	}
	return nil, fmt.Errorf("block-vs-token: unknown source %q; known: %v", src, bvtSources)
}

func bvtRow(g int, rule, kind, model string, beta, mean, lo, hi float64, trials int64, gain float64) Row {
	eq1, _ := algos.ExpectedTokens(beta, g)
	return Row{
		{K: "gamma", V: int64(g)}, {K: "rule", V: rule}, {K: "kind", V: kind}, {K: "model", V: model},
		{K: "beta_measured", V: beta}, {K: "eq1", V: eq1},
		{K: "mean_emitted", V: mean}, {K: "ci_lo", V: lo}, {K: "ci_hi", V: hi},
		{K: "trials", V: trials}, {K: "gain_pct", V: gain},
	}
}

// bvtMarkovPair draws a V = 4 Markov pair of the given order whose mean β
// over all states is beta (within 1e-9), or fails if beta is out of reach.
func bvtMarkovPair(rng *rand.Rand, order int, beta float64) (sim.Pair, error) {
	base, err := sim.NewMarkovPair(rng, sim.MarkovConfig{V: bvtMarkovV, Order: order, A: bvtMarkovA, Quality: 0})
	if err != nil {
		return sim.Pair{}, err
	}
	p := base.P.(*sim.Markov)
	// The draft's excess mass goes to the token the target likes least:
	// anti is one-hot at argmin p, so Q = 0 gives mean β = mean min p ≤ 1/V.
	anti := &sim.Markov{V: p.V, K: p.K, Rows: make([][]float64, len(p.Rows))}
	for s, pr := range p.Rows {
		lo := 0
		for i, v := range pr {
			if v < pr[lo] {
				lo = i
			}
		}
		anti.Rows[s] = make([]float64, p.V)
		anti.Rows[s][lo] = 1
	}
	mix := func(qual float64) *sim.Markov {
		q := &sim.Markov{V: p.V, K: p.K, Rows: make([][]float64, len(p.Rows))}
		for s := range q.Rows {
			q.Rows[s] = make([]float64, p.V)
			for i := range q.Rows[s] {
				q.Rows[s][i] = qual*p.Rows[s][i] + (1-qual)*anti.Rows[s][i]
			}
			sim.Normalize(q.Rows[s])
		}
		return q
	}
	meanBeta := func(q *sim.Markov) float64 {
		t := 0.0
		for s := range q.Rows {
			t += sim.Alpha(p.Rows[s], q.Rows[s])
		}
		return t / float64(len(q.Rows))
	}
	// Σmin(p, Q p + (1-Q) r) is concave in Q with its maximum 1 at Q = 1,
	// hence non-decreasing on [0, 1]: bisection finds the Q.
	if b0 := meanBeta(mix(0)); b0 > beta {
		return sim.Pair{}, fmt.Errorf("block-vs-token: beta_target %g is below the lowest mean β %.4f this Markov pair reaches", beta, b0)
	}
	lo, hi := 0.0, 1.0
	for range 100 {
		mid := (lo + hi) / 2
		if meanBeta(mix(mid)) < beta {
			lo = mid
		} else {
			hi = mid
		}
	}
	qual := (lo + hi) / 2
	name := fmt.Sprintf("markov:V=%d,order=%d,a=%g,quality=%.6f", bvtMarkovV, order, bvtMarkovA, qual)
	return sim.Pair{Name: name, P: p, Q: mix(qual)}, nil
}

// pathBeta returns the mean over positions 1..γ of E[β(p(.|x<i), q(.|x<i))]
// with the draft prefix x<i drawn from q, from the empty context.
func pathBeta(pair sim.Pair, g int) float64 {
	v := pair.P.Vocab()
	p, q := make([][]float64, g), make([][]float64, g)
	for i := range p {
		p[i], q[i] = make([]float64, v), make([]float64, v)
	}
	sum := make([]float64, g)
	ctx := make([]int, 0, g)
	var walk func(i int, w float64)
	walk = func(i int, w float64) {
		pair.P.Next(ctx, p[i])
		pair.Q.Next(ctx, q[i])
		sum[i] += w * sim.Alpha(p[i], q[i])
		if i+1 == g {
			return
		}
		for x := 0; x < v; x++ {
			if q[i][x] > 0 {
				ctx = append(ctx, x)
				walk(i+1, w*q[i][x])
				ctx = ctx[:len(ctx)-1]
			}
		}
	}
	walk(0, 1)
	t := 0.0
	for _, s := range sum {
		t += s
	}
	return t / float64(g)
}

// exactTokenBlock returns the exact E[emitted] per step of token and
// block verification on pair at draft length g (L = 1 suffices: the
// expectations do not depend on how many tokens are compared).
func exactTokenBlock(pair sim.Pair, g int) (token, block float64, err error) {
	tok, err := sim.Exact(pair, algos.Token{}, sim.ExactConfig{Gamma: g, L: 1})
	if err != nil {
		return 0, 0, err
	}
	blk, err := sim.Exact(pair, algos.Block{}, sim.ExactConfig{Gamma: g, L: 1})
	if err != nil {
		return 0, 0, err
	}
	return tok.ExpectedEmitted, blk.ExpectedEmitted, nil
}

func bvtExact(ctx context.Context, pair sim.Pair) ([]Row, error) {
	var rows []Row
	for g := 1; g <= bvtMaxGamma; g++ {
		if err := ctx.Err(); err != nil {
			return rows, err
		}
		t, b, err := exactTokenBlock(pair, g)
		if err != nil {
			return nil, err
		}
		beta := pathBeta(pair, g)
		gain := 100 * (b/t - 1)
		rows = append(rows,
			bvtRow(g, "token", "exact", pair.Name, beta, t, t, t, 0, 0),
			bvtRow(g, "block", "exact", pair.Name, beta, b, b, b, 0, gain),
			bvtRow(g, "gain", "exact", pair.Name, beta, b-t, b-t, b-t, 0, gain))
	}
	return rows, nil
}

// bvtPool builds a pool of gamma draft positions per context (γ = 8 for
// block-vs-token's cells; seeds' replicates, which run γ = 4 only, build
// and calibrate 4, half the work) within budget bytes.
func bvtPool(beta float64, gamma int, seed uint64, budget int64) (*sim.Pool, error) {
	spec := fmt.Sprintf("dirichlet:V=%d,a=0.1,beta=%g,contexts=64", bvtPoolV, beta)
	src, err := source.New(spec, gamma, seed, budget)
	if err != nil {
		return nil, err
	}
	pl, _ := sim.PoolOf(src)
	return pl, nil
}

// poolBeta returns the mean β of the pool's draft rows at positions 0..g-1.
func poolBeta(pl *sim.Pool, g int) float64 {
	t := 0.0
	for c := 0; c < pl.Contexts; c++ {
		for i := 0; i < g; i++ {
			p, q := pl.PRow(c, i), pl.QRow(c, i)
			s := 0.0
			for x := range p {
				s += math.Min(float64(p[x]), float64(q[x]))
			}
			t += s
		}
	}
	return t / float64(pl.Contexts*g)
}

// bvtAcc holds the emitted tokens per step of token (t) and block (b)
// verification on the same draft and coins, and their difference (d).
type bvtAcc struct{ t, b, d stattest.Sums }

// bvtDrafter drafts a γ = g step from the γ = 8 pool: the full block is
// drawn as the pool draws it and its first g positions are kept.
type bvtDrafter struct {
	pl *sim.Pool
	g  int
}

func (d bvtDrafter) DraftChain(r *run.Round, dst *sim.Block) error {
	// the pool's context from the Source stream, its draft from Draft
	d.pl.Fill(r.Rand(run.Draft), r.Rand(run.Source).IntN(d.pl.Contexts), dst)
	dst.Tokens, dst.Q, dst.P = dst.Tokens[:d.g], dst.Q[:d.g], dst.P[:d.g+1]
	return nil
}

// bvtMC runs token and block verification on the same drafts and coins
// of pool pl at each γ in [g0, g1] (each γ its own keyed streams, so a
// γ's rows do not depend on the range).
func bvtMC(ctx context.Context, cfg Config, pl *sim.Pool, seed uint64, g0, g1 int) ([]Row, error) {
	n := cfg.Trials(bvtTrials)
	var rows []Row
	for g := g0; g <= g1; g++ {
		// Token then block verification on the same draft, each with a
		// fresh generator on the trial's coins stream.
		l := &run.Loop{Seed: seed, Keys: run.Named("block-vs-token", uint64(g)), Chains: bvtDrafter{pl, g},
			Verifiers: []run.Verifier{run.Chain(algos.Token{}), run.Chain(algos.Block{})}}
		acc, done, err := run.Rounds(ctx, n, l, cfg.MC(),
			func() *bvtAcc { return &bvtAcc{} },
			func(a *bvtAcc, r *run.Round) error {
				t, k := float64(r.Outcomes[0].Emitted()), float64(r.Outcomes[1].Emitted())
				a.t.Add(t)
				a.b.Add(k)
				a.d.Add(k - t)
				return nil
			},
			func(dst, src *bvtAcc) {
				dst.t.Merge(src.t)
				dst.b.Merge(src.b)
				dst.d.Merge(src.d)
			})
		if err != nil {
			return rows, err
		}
		ts, bs, ds := acc.t.Summary(0.95), acc.b.Summary(0.95), acc.d.Summary(0.95)
		beta := poolBeta(pl, g)
		gain := 100 * (bs.Mean/ts.Mean - 1)
		model := fmt.Sprintf("%s,sigma=%.6f", pl.Name, pl.Sigma)
		rows = append(rows,
			bvtRow(g, "token", "mc", model, beta, ts.Mean, ts.Lo, ts.Hi, done, 0),
			bvtRow(g, "block", "mc", model, beta, bs.Mean, bs.Lo, bs.Hi, done, gain),
			bvtRow(g, "gain", "mc", model, beta, ds.Mean, ds.Lo, ds.Hi, done, gain))
	}
	return rows, nil
}

// blockSlice is block-vs-token's Monte Carlo gain row at γ = 4 and target
// β, which the paper quotes.
func blockSlice(beta string) []string {
	return []string{"kind", "mc", "rule", "gain", "beta_target", beta, "gamma", "4"}
}

// blockTable is block-vs-token's table: the Monte Carlo gain at γ ∈ {2, 4,
// 8}.
func blockTable(rows []Row) table.Text {
	t := table.Text{Caption: "Block vs token verification, paired Monte Carlo on dirichlet:V=2048 pools: emitted tokens per step (95% CI) and block's gain.",
		Header: []string{"β", "γ", "Eq. 1", "token", "block", "gain", "gain 95% CI", "gain %"}, Right: table.RightCols(8, 0, 1, 2, 3, 4, 5, 6, 7)}
	key := func(r Row) string {
		return r.String("source") + "|" + r.String("beta_target") + "|" + r.String("gamma")
	}
	byKey := map[string]map[string]Row{}
	var order []string
	for _, r := range rows {
		if r.String("kind") != "mc" {
			continue
		}
		g, _ := r.Float("gamma")
		if g != 2 && g != 4 && g != 8 {
			continue
		}
		k := key(r)
		if byKey[k] == nil {
			byKey[k] = map[string]Row{}
			order = append(order, k)
		}
		byKey[k][r.String("rule")] = r
	}
	for _, k := range order {
		m := byKey[k]
		tok, blk, gain := m["token"], m["block"], m["gain"]
		if tok == nil || blk == nil || gain == nil {
			continue
		}
		t.Rows = append(t.Rows, []string{dec(tok, "beta_measured", 3), dec(tok, "gamma", 0), dec(tok, "eq1", 3),
			dec(tok, "mean_emitted", 3), dec(blk, "mean_emitted", 3), dec(gain, "mean_emitted", 3),
			"[" + dec(gain, "ci_lo", 3) + ", " + dec(gain, "ci_hi", 3) + "]", dec(gain, "gain_pct", 1)})
	}
	return t
}

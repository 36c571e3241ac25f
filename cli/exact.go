package cli

import (
	"context"
	"fmt"
	"io"
	"math"

	"github.com/urfave/cli/v2"

	"github.com/specsim/specsim/algos"
	"github.com/specsim/specsim/internal/diag"
	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/sim/source"
)

func init() { register(exactCommand) }

// exactPosition is the per-position part of the JSON form of 'simulate
// exact': the marginal law π_i of the i-th emitted token against the
// target's marginal p_i.
type exactPosition struct {
	Position int `json:"position"`
	// Acceptance is Pr(the i-th draft token is accepted) (0 at i = γ+1).
	Acceptance float64 `json:"acceptance"`
	KL         float64 `json:"kl"`         // KL(p_i‖π_i)
	KLReverse  float64 `json:"kl_reverse"` // KL(π_i‖p_i)
	TV         float64 `json:"tv"`         // TV(p_i, π_i)
	MaxRatio   float64 `json:"max_ratio"`  // max_t π_i(t)/p_i(t) (+Inf where p_i(t) = 0 < π_i(t))
}

// exactJSON is the JSON form of 'simulate exact'. Field names are stable.
type exactJSON struct {
	Algorithm string             `json:"algorithm"`
	Params    map[string]float64 `json:"params"`
	Source    string             `json:"source"`
	// Seed is the seed that built --source; null for -p/-q, which use
	// no randomness.
	Seed  *uint64 `json:"seed"`
	V     int     `json:"V"`
	Gamma int     `json:"gamma"`
	L     int     `json:"L"`
	exactLaw
	Lossless     bool            `json:"lossless"`
	Lossy        bool            `json:"lossy"`
	Mutant       bool            `json:"mutant"`
	Greedy       bool            `json:"greedy"`
	AcceptedDist []float64       `json:"accepted_dist"`
	Positions    []exactPosition `json:"positions"`
}

// exactLaw is the part of both JSON forms of 'simulate exact' (chain and
// tree rules) that sums up a step and compares the law π of the first L
// emitted tokens with the target's (sim.SeqComparison); its fields stand
// in the JSON where it is embedded.
type exactLaw struct {
	ExpectedAccepted float64 `json:"expected_accepted"`
	ExpectedEmitted  float64 `json:"expected_emitted"`
	MaxAbsError      float64 `json:"max_abs_error"`
	TV               float64 `json:"tv"`
	KL               float64 `json:"kl"`
	KLReverse        float64 `json:"kl_reverse"`
}

func newExactLaw(accepted, emitted float64, c sim.SeqComparison) exactLaw {
	return exactLaw{ExpectedAccepted: accepted, ExpectedEmitted: emitted, MaxAbsError: c.MaxAbsError, TV: c.TV, KL: c.KL, KLReverse: c.KLReverse}
}

func exactCommand() *cli.Command {
	return &cli.Command{
		Name:  "exact",
		Usage: "enumerate every draft of a small model pair and compare the emitted law with the target's exactly",
		Flags: append([]cli.Flag{
			algoFlag("token"), paramFlag(),
			&cli.StringFlag{Name: "p", Usage: "target distribution, e.g. 1/3,2/3 (with --q: the same pair at every position)"},
			&cli.StringFlag{Name: "q", Usage: "draft distribution, e.g. 2/3,1/3"},
			&cli.StringFlag{Name: "source", Usage: "a model pair instead of -p/-q, e.g. markov:V=4,order=1,seed=7"},
			gammaFlag("draft length gamma"),
			&cli.IntFlag{Name: "L", Usage: "compare the first L emitted tokens (0: gamma+1)"},
			seedFlag(), jsonFlag(),
		}, treeFlags()...),
		Action: func(c *cli.Context) error {
			if isTreeRun(c) {
				return exactTree(c)
			}
			e, a, ps, err := buildAlgo(c)
			if err != nil {
				return err
			}
			lw, ok := a.(sim.Lawer)
			if !ok {
				return diag.Usage(fmt.Errorf("algorithm %s has no exact law; use 'simulate check' for a statistical verdict", e.Name))
			}
			seed := masterSeed(c)
			pair, err := pairFromFlags(c, seed)
			if err != nil {
				return err
			}
			ctx, stop := signalContext(c.Context)
			defer stop()
			res, err := sim.ExactContext(ctx, pair, lw, sim.ExactConfig{Gamma: c.Int("gamma"), L: c.Int("L"), Greedy: e.Greedy})
			if err != nil {
				return exactErr(ctx, err)
			}
			out := exactReport(e, ps, pair.Name, sourceSeed(c, seed), res)
			return printResult(c, out, func(w io.Writer) {
				fmt.Fprintf(w, "algorithm %s on %s (V = %d, gamma = %d, L = %d%s)\n", out.Algorithm, out.Source, out.V, out.Gamma, out.L, seedNote(out.Seed))
				fmt.Fprintf(w, "E[accepted] = %.12g  E[emitted] = %.12g per step\n", out.ExpectedAccepted, out.ExpectedEmitted)
				fmt.Fprintf(w, "max |pi(s) - p(s)| = %.3g  TV = %.3g  KL(p||pi) = %.3g  -> lossless: %v\n", out.MaxAbsError, out.TV, out.KL, out.Lossless)
				for _, p := range out.Positions {
					fmt.Fprintf(w, "  position %d: acceptance %.6f  KL %.3g  TV %.3g  max pi/p %.4g\n", p.Position, p.Acceptance, p.KL, p.TV, p.MaxRatio)
				}
			})
		},
	}
}

// exactErr maps an error of the exact engine: interrupted when ctx was
// cancelled (an enumeration has no partial result), else a usage error
// (the pair, rule or size is not enumerable).
func exactErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return diag.Interrupted(fmt.Errorf("interrupted; an exact enumeration has no partial result"))
	}
	return diag.Usage(err)
}

// pairFromFlags builds the model pair of -p/-q or --source.
func pairFromFlags(c *cli.Context, seed uint64) (sim.Pair, error) {
	hasPQ := c.IsSet("p") || c.IsSet("q")
	if hasPQ && c.IsSet("source") {
		return sim.Pair{}, diag.Usage(fmt.Errorf("give either -p/-q or --source, not both"))
	}
	if hasPQ {
		p, q, err := pqFlags(c)
		if err != nil {
			return sim.Pair{}, err
		}
		if err := sim.ValidatePair(p, q); err != nil {
			return sim.Pair{}, diag.Usage(err)
		}
		return sim.Pair{Name: "fixed", P: sim.Fixed(p), Q: sim.Fixed(q)}, nil
	}
	if !c.IsSet("source") {
		return sim.Pair{}, diag.Usage(fmt.Errorf("no distributions: give -p and -q, or --source markov:V=4,order=1"))
	}
	src, err := source.New(c.String("source"), c.Int("gamma"), seed, memBudget(c))
	if err != nil {
		return sim.Pair{}, diag.Usage(err)
	}
	pair, ok := sim.PairOf(src)
	if !ok {
		return sim.Pair{}, diag.Usage(fmt.Errorf("--source %s is a large synthetic pool; the exact engine needs a small model pair (markov:...) or -p/-q; use 'simulate check' for pools", c.String("source")))
	}
	return pair, nil
}

// sourceSeed is the seed exact reports: the one that built --source, or
// nil for -p/-q (a fixed pair draws nothing).
func sourceSeed(c *cli.Context, seed uint64) *uint64 {
	if !c.IsSet("source") {
		return nil
	}
	return &seed
}

// seedNote is ", seed N" for a seeded source, else "".
func seedNote(s *uint64) string {
	if s == nil {
		return ""
	}
	return fmt.Sprintf(", seed %d", *s)
}

func exactReport(e algos.Entry, ps algos.Params, source string, seed *uint64, res sim.ExactResult) exactJSON {
	out := exactJSON{Algorithm: e.Name, Params: ps, Source: source, Seed: seed, V: res.V, Gamma: res.Gamma, L: res.L,
		exactLaw: newExactLaw(res.ExpectedAccepted, res.ExpectedEmitted, res.SeqComparison), Lossless: res.Lossless, Lossy: e.Lossy,
		Mutant: e.Mutant, Greedy: e.Greedy, AcceptedDist: res.Accepted}
	for i := 0; i < res.L; i++ {
		pi := sim.Marginal(res.Emitted, res.V, res.L, i)
		pt := sim.Marginal(res.Target, res.V, res.L, i)
		acc := 0.0
		for n := i + 1; n < len(res.Accepted); n++ {
			acc += res.Accepted[n]
		}
		ratio := 0.0
		for t := range pi {
			switch {
			case pt[t] > 0:
				ratio = math.Max(ratio, pi[t]/pt[t])
			case pi[t] > 0:
				ratio = math.Inf(1)
			}
		}
		out.Positions = append(out.Positions, exactPosition{Position: i + 1, Acceptance: acc, KL: sim.KL(pt, pi),
			KLReverse: sim.KL(pi, pt), TV: sim.TV(pt, pi), MaxRatio: ratio})
	}
	return out
}

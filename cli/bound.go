package cli

import (
	"fmt"
	"io"

	"github.com/specsim/specsim/algos"
	"github.com/specsim/specsim/experiments"
	"github.com/specsim/specsim/internal/diag"
	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/sim/draft"

	"github.com/urfave/cli/v2"
)

func init() { register(boundCommand) }

func boundCommand() *cli.Command {
	return &cli.Command{
		Name:  "bound",
		Usage: "optimal multi-draft acceptance alpha* = min_A [1 - p(A) + P(draft set meets A)] for k drafts at one position; with --depth, the optimal E[accepted] of a depth-d tree over node-wise verifiers",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "p", Usage: "target distribution, e.g. 1/3,1/3,1/3 (with --depth: the same pair at every position)"},
			&cli.StringFlag{Name: "q", Usage: "draft distribution, e.g. 1/3,0.1,17/30"},
			kFlag("number of drafts"),
			&cli.BoolFlag{Name: "replacement", Value: true, Usage: "drafts i.i.d. (true) or without replacement (false)"},
			&cli.StringFlag{Name: "method", Value: "auto", Usage: "auto (exhaustive for V <= 20, else prefix with replacement and max-flow without), exhaustive, flow or prefix (i.i.d. drafts, any V)"},
			&cli.BoolFlag{Name: "topk", Usage: "drafts are the k most likely tokens of q (deterministic): alpha* = p of those tokens (--replacement and --method do not apply)"},
			&cli.IntFlag{Name: "depth", Usage: "the depth-d optimum: the largest E[accepted] per step of a depth-d tree (k i.i.d. chains; --replacement=false or --topk: --branch children per depth) over node-wise lossless verifiers, by backward induction with a coupling LP per node"},
			&cli.StringFlag{Name: "source", Usage: "with --depth: a small model pair instead of -p/-q, e.g. markov:V=4,order=1,seed=7"},
			&cli.StringFlag{Name: "branch", Usage: "with --depth and --replacement=false or --topk: children per depth, e.g. 2,2 (default: k,1,...,1)"},
			seedFlag(), jsonFlag(),
		},
		Action: func(c *cli.Context) error {
			if c.IsSet("depth") {
				return boundDepth(c)
			}
			for _, f := range []string{"source", "branch", "seed"} {
				if c.IsSet(f) {
					return diag.Usage(fmt.Errorf("--%s is for the depth-d optimum; add --depth D, or leave it out", f))
				}
			}
			if !c.IsSet("p") || !c.IsSet("q") {
				return diag.Usage(fmt.Errorf("--p and --q are required: the target and draft distributions, e.g. --p 1/2,1/2 --q 2/3,1/3"))
			}
			p, q, err := pqFlags(c)
			if err != nil {
				return err
			}
			out, err := boundOf(c, p, q)
			if err != nil {
				return err
			}
			return printBound(c, out)
		},
	}
}

// printBound prints bound's result, with the depth-d optimum when there
// is one.
func printBound(c *cli.Context, out experiments.BoundResult) error {
	return printResult(c, out, func(w io.Writer) {
		if out.Depth > 0 {
			fmt.Fprintf(w, "V_%d = %.12g optimal E[accepted] per step over node-wise verifiers (%s, %s drafts, k = %d, V = %d)\n",
				out.Depth, out.OptimalAccepted, out.Source, out.Draft, out.K, out.V)
		}
		fmt.Fprintf(w, "alpha* = %.12g for k = %d drafts (replacement %v, top-k %v, V = %d, %s); single draft sum min(p,q) = %.12g\n",
			out.OptimalAcceptance, out.K, out.Replacement, out.TopK, out.V, out.Method, out.SingleDraft)
	})
}

// boundOf runs the bound the flags ask for: top-k drafts with --topk
// (refusing --replacement and --method beside it), else Bound.
func boundOf(c *cli.Context, p, q []float64) (experiments.BoundResult, error) {
	k, err := givenK(c)
	if err != nil {
		return experiments.BoundResult{}, err
	}
	k = draft.K(k, "")
	if !c.Bool("topk") {
		return experiments.Bound(p, q, k, c.Bool("replacement"), c.String("method"))
	}
	for _, f := range []string{"replacement", "method"} {
		if c.IsSet(f) {
			return experiments.BoundResult{}, diag.Usage(fmt.Errorf("--%s does not apply to --topk (the draft set is fixed); leave it out", f))
		}
	}
	return experiments.BoundTopK(p, q, k)
}

// boundDepth is 'simulate bound --depth D': the drafter from --topk
// (top-k), --replacement=false (without replacement) or else k i.i.d.
// chains, on the pair of -p/-q or --source.
func boundDepth(c *cli.Context) error {
	if c.IsSet("method") {
		return diag.Usage(fmt.Errorf("--method does not apply to --depth (each node's coupling LP is solved by the simplex method); leave it out"))
	}
	if c.Bool("topk") && c.IsSet("replacement") {
		return diag.Usage(fmt.Errorf("--replacement does not apply to --topk (the draft set is fixed); leave it out"))
	}
	k, err := givenK(c)
	if err != nil {
		return err
	}
	cfg := algos.TreeOptimumConfig{Draft: sim.DraftIID, K: draft.K(k, ""), Depth: c.Int("depth")}
	switch {
	case c.Bool("topk"):
		cfg.Draft = sim.DraftTopK
	case !c.Bool("replacement"):
		cfg.Draft = sim.DraftWOR
	}
	if c.IsSet("branch") {
		if cfg.Draft == sim.DraftIID {
			return diag.Usage(fmt.Errorf("--branch needs --replacement=false or --topk: i.i.d. drafts are k chains"))
		}
		br, err := parseBranch(c.String("branch"))
		if err != nil {
			return diag.Usage(err)
		}
		if len(br) != cfg.Depth {
			return diag.Usage(fmt.Errorf("--branch has %d entries for --depth %d; give one per depth", len(br), cfg.Depth))
		}
		cfg.Branch = br
	}
	pair, err := pairFromFlags(c, masterSeed(c))
	if err != nil {
		return err
	}
	out, err := experiments.BoundDepth(pair, cfg)
	if err != nil {
		return err
	}
	return printBound(c, out)
}

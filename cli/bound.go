package cli

import (
	"fmt"
	"io"

	"github.com/specsim/specsim/experiments"
	"github.com/specsim/specsim/internal/diag"
	"github.com/specsim/specsim/sim/draft"

	"github.com/urfave/cli/v2"
)

func init() { register(boundCommand) }

func boundCommand() *cli.Command {
	return &cli.Command{
		Name:  "bound",
		Usage: "optimal multi-draft acceptance alpha* = min_A [1 - p(A) + P(draft set meets A)] for k drafts at one position",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "p", Required: true, Usage: "target distribution, e.g. 1/3,1/3,1/3"},
			&cli.StringFlag{Name: "q", Required: true, Usage: "draft distribution, e.g. 1/3,0.1,17/30"},
			kFlag("number of drafts"),
			&cli.BoolFlag{Name: "replacement", Value: true, Usage: "drafts i.i.d. (true) or without replacement (false)"},
			&cli.StringFlag{Name: "method", Value: "auto", Usage: "auto (exhaustive for V <= 20, else prefix with replacement and max-flow without), exhaustive, flow or prefix (i.i.d. drafts, any V)"},
			&cli.BoolFlag{Name: "topk", Usage: "drafts are the k most likely tokens of q (deterministic): alpha* = p of those tokens (--replacement and --method do not apply)"},
			jsonFlag(),
		},
		Action: func(c *cli.Context) error {
			p, q, err := pqFlags(c)
			if err != nil {
				return err
			}
			out, err := boundOf(c, p, q)
			if err != nil {
				return err
			}
			return printResult(c, out, func(w io.Writer) {
				fmt.Fprintf(w, "alpha* = %.12g for k = %d drafts (replacement %v, top-k %v, V = %d, %s); single draft sum min(p,q) = %.12g\n",
					out.OptimalAcceptance, out.K, out.Replacement, out.TopK, out.V, out.Method, out.SingleDraft)
			})
		},
	}
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

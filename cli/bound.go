package cli

import (
	"fmt"
	"io"

	"github.com/specsim/specsim/experiments"

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
			&cli.IntFlag{Name: "k", Value: 2, Usage: "number of drafts"},
			&cli.BoolFlag{Name: "replacement", Value: true, Usage: "drafts i.i.d. (true) or without replacement (false)"},
			&cli.StringFlag{Name: "method", Value: "auto", Usage: "auto (exhaustive for V <= 20, else prefix with replacement and max-flow without), exhaustive, flow or prefix (i.i.d. drafts, any V)"},
			jsonFlag(),
		},
		Action: func(c *cli.Context) error {
			p, q, err := pqFlags(c)
			if err != nil {
				return err
			}
			out, err := experiments.Bound(p, q, c.Int("k"), c.Bool("replacement"), c.String("method"))
			if err != nil {
				return err
			}
			return printResult(c, out, func(w io.Writer) {
				fmt.Fprintf(w, "alpha* = %.12g for k = %d drafts (replacement %v, V = %d, %s); single draft sum min(p,q) = %.12g\n",
					out.OptimalAcceptance, out.K, out.Replacement, out.V, out.Method, out.SingleDraft)
			})
		},
	}
}

package cli

import (
	"fmt"

	"github.com/specsim/specsim/internal/cliutil"

	"github.com/urfave/cli/v2"

	"github.com/specsim/specsim/algos"
	"github.com/specsim/specsim/sim"
)

func init() { register(boundCommand) }

// boundJSON is the JSON form of 'simulate bound'. Field names are stable.
type boundJSON struct {
	V                 int     `json:"V"`
	K                 int     `json:"k"`
	Replacement       bool    `json:"replacement"`
	Method            string  `json:"method"`
	OptimalAcceptance float64 `json:"optimal_acceptance"`
	// SingleDraft is Σ min(p, q), the k = 1 value (token verification).
	SingleDraft float64 `json:"single_draft"`
}

func boundCommand() *cli.Command {
	return &cli.Command{
		Name:  "bound",
		Usage: "optimal multi-draft acceptance alpha* = min_A [1 - p(A) + P(draft set meets A)] for k drafts at one position",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "p", Required: true, Usage: "target distribution, e.g. 1/3,1/3,1/3"},
			&cli.StringFlag{Name: "q", Required: true, Usage: "draft distribution, e.g. 1/3,0.1,17/30"},
			&cli.IntFlag{Name: "k", Value: 2, Usage: "number of drafts"},
			&cli.BoolFlag{Name: "replacement", Value: true, Usage: "drafts i.i.d. (true) or without replacement (false)"},
			&cli.StringFlag{Name: "method", Value: "auto", Usage: "auto (exhaustive for V <= 20, else max-flow), exhaustive or flow"},
			jsonFlag(),
		},
		Action: func(c *cli.Context) error {
			p, err := parseDist("--p", c.String("p"), c.App.ErrWriter)
			if err != nil {
				return cliutil.Usage(err)
			}
			q, err := parseDist("--q", c.String("q"), c.App.ErrWriter)
			if err != nil {
				return cliutil.Usage(err)
			}
			if err := sim.ValidatePair(p, q); err != nil {
				return cliutil.Usage(err)
			}
			k, repl := c.Int("k"), c.Bool("replacement")
			method := c.String("method")
			if method == "auto" {
				method = "exhaustive"
				if len(p) > algos.MaxExhaustiveV {
					method = "flow"
				}
			}
			var a float64
			switch method {
			case "exhaustive":
				a, err = algos.OptimalAcceptanceExhaustive(p, q, k, repl)
			case "flow":
				a, err = algos.OptimalAcceptanceFlow(p, q, k, repl)
			default:
				return cliutil.Usage(fmt.Errorf("--method %q: use auto, exhaustive or flow", method))
			}
			if err != nil {
				return cliutil.Usage(err)
			}
			out := boundJSON{V: len(p), K: k, Replacement: repl, Method: method, OptimalAcceptance: a, SingleDraft: sim.Alpha(p, q)}
			if c.Bool("json") {
				return cliutil.WriteJSON(c.App.Writer, out)
			}
			fmt.Fprintf(c.App.Writer, "alpha* = %.12g for k = %d drafts (replacement %v, V = %d, %s); single draft sum min(p,q) = %.12g\n",
				a, k, repl, len(p), method, out.SingleDraft)
			return nil
		},
	}
}

package cli

import (
	"fmt"
	"os"

	"github.com/specsim/specsim/internal/cliutil"

	"github.com/urfave/cli/v2"

	"github.com/specsim/specsim/data"
	"github.com/specsim/specsim/sim"
)

func init() { register(logSyntheticCommand) }

// logSyntheticJSON is the JSON form of 'simulate log-synthetic'.
type logSyntheticJSON struct {
	Out      string `json:"out"`
	Source   string `json:"source"`
	Seed     uint64 `json:"seed"`
	Steps    int64  `json:"steps"`
	Gamma    int    `json:"gamma"`
	V        int    `json:"V"`
	Layout   string `json:"layout"`
	RowKind  string `json:"row_kind"`
	Sampling string `json:"sampling"`
	Bytes    int64  `json:"bytes"`
}

func logSyntheticCommand() *cli.Command {
	return &cli.Command{
		Name:  "log-synthetic",
		Usage: "log a synthetic model pair's (or pool's) speculative run with token verification to a parquet log",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "source", Required: true, Usage: "model pair or pool spec, e.g. markov:V=4,order=1,seed=7 or dirichlet:V=32000,a=0.1,beta=0.7"},
			&cli.IntFlag{Name: "steps", Value: 1000, Usage: "steps (rows) to log"},
			&cli.IntFlag{Name: "gamma", Value: 4, Usage: "draft length γ"},
			&cli.StringFlag{Name: "out", Required: true, Usage: "output file (parquet)"},
			&cli.IntFlag{Name: "sparse", Usage: "store the K largest entries per row plus the tail mass (0: dense)"},
			&cli.IntFlag{Name: "steps-per-prompt", Usage: "restart the context every N steps (0: one prompt)"},
			&cli.BoolFlag{Name: "logits", Usage: "store log-probabilities as raw logits (the reader applies the sampling flags)"},
			&cli.Float64Flag{Name: "temperature", Value: 1, Usage: "sampling temperature (0: greedy)"},
			&cli.IntFlag{Name: "top-k", Usage: "top-k filter (0: off)"},
			&cli.Float64Flag{Name: "top-p", Value: 1, Usage: "nucleus filter (1: off)"},
			&cli.Float64Flag{Name: "min-p", Usage: "min-p filter (0: off)"},
			&cli.StringFlag{Name: "run-id", Value: "synthetic", Usage: "run id stored in every row"},
			seedFlag(), jsonFlag(),
		},
		Action: func(c *cli.Context) error {
			seed := masterSeed(c)
			g := c.Int("gamma")
			if c.Int("steps") < 1 {
				return cliutil.Usage(fmt.Errorf("--steps = %d; log at least one step", c.Int("steps")))
			}
			if c.Int("sparse") < 0 {
				return cliutil.Usage(fmt.Errorf("--sparse = %d; use 0 (dense) or a positive count", c.Int("sparse")))
			}
			src, err := sim.NewSource(c.String("source"), g, seed)
			if err != nil {
				return cliutil.Usage(err)
			}
			s := data.Sampling{Temperature: c.Float64("temperature"), TopK: c.Int("top-k"), TopP: c.Float64("top-p"), MinP: c.Float64("min-p")}
			if err := s.Validate(); err != nil {
				return cliutil.Usage(err)
			}
			cfg := data.RunConfig{Steps: c.Int("steps"), Gamma: g, StepsPerPrompt: c.Int("steps-per-prompt"), Seed: seed,
				RunID: c.String("run-id"), Sampling: s, Logits: c.Bool("logits")}
			pv := data.BuildProvenance("simulate log-synthetic", src.Spec, seed)
			pv.Extra = map[string]string{"command": fmt.Sprintf("log-synthetic --source %s --steps %d --gamma %d --sparse %d --logits=%v --steps-per-prompt %d --%s",
				src.Spec, cfg.Steps, g, c.Int("sparse"), cfg.Logits, cfg.StepsPerPrompt, s)}
			w, err := data.Create(c.String("out"), data.WriterOptions{Sparse: c.Int("sparse"), Provenance: pv})
			if err != nil {
				return cliutil.IO(err)
			}
			ctx, cancel := signalContext(c.Context)
			defer cancel()
			v := 0
			if src.Pair != nil {
				v = src.Pair.P.Vocab()
				err = data.LogRun(ctx, w, &data.PairRows{Pair: *src.Pair}, src.Spec+"/p", src.Spec+"/q", cfg)
			} else {
				v = src.Pool.V
				err = data.LogPool(ctx, w, src.Pool, cfg)
			}
			cerr := w.Close()
			if err != nil {
				if ctx.Err() != nil {
					return cliutil.Interrupted(err)
				}
				return cliutil.Usage(err)
			}
			if cerr != nil {
				return cliutil.IO(cerr)
			}
			st, err := os.Stat(c.String("out"))
			if err != nil {
				return cliutil.IO(err)
			}
			out := logSyntheticJSON{Out: c.String("out"), Source: src.Spec, Seed: seed, Steps: w.Rows(), Gamma: g, V: v,
				Layout: data.LayoutDense, RowKind: data.KindProbs, Sampling: s.String(), Bytes: st.Size()}
			if c.Int("sparse") > 0 {
				out.Layout = data.LayoutSparse
			}
			if cfg.Logits {
				out.RowKind = data.KindLogits
			}
			if c.Bool("json") {
				return cliutil.WriteJSON(c.App.Writer, out)
			}
			fmt.Fprintf(c.App.Writer, "wrote %s: %d steps of %s (V = %d, gamma = %d, %s %s, seed %d), %d bytes\n",
				out.Out, out.Steps, out.Source, out.V, out.Gamma, out.Layout, out.RowKind, out.Seed, out.Bytes)
			return nil
		},
	}
}

package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/specsim/specsim/internal/diag"
	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/sim/source"
)

func init() { register(describeCommand) }

// describeFullV is the largest V whose rows 'describe' prints in full.
const describeFullV = 16

// describeTop is how many top tokens 'describe' lists per row.
const describeTop = 5

// describeRow is one (context or state, position) of a source: JSON
// fields are stable.
type describeRow struct {
	// Context is the pool context or the model state; Position the draft
	// position, numbered from 1 as 'check' numbers the positions it tests
	// (pools; null for model pairs, whose rows depend on the state).
	Context  int    `json:"context"`
	Position *int   `json:"position"`
	State    string `json:"state,omitempty"` // model pairs: the context tokens ("^" = start)
	// EntropyP and EntropyQ are in nats; Alpha is Σ min(p, q).
	EntropyP float64 `json:"entropy_p"`
	EntropyQ float64 `json:"entropy_q"`
	Alpha    float64 `json:"alpha"`
	TopP     []token `json:"top_p"`
	TopQ     []token `json:"top_q"`
	// P and Q are the full rows when V <= 16.
	P []float64 `json:"p,omitempty"`
	Q []float64 `json:"q,omitempty"`
}

type token struct {
	Token int     `json:"token"`
	Prob  float64 `json:"prob"`
}

// describeJSON is 'simulate describe --json'.
type describeJSON struct {
	Source string        `json:"source"`
	Kind   string        `json:"kind"` // "pool" or "pair"
	V      int           `json:"V"`
	Gamma  int           `json:"gamma,omitempty"`
	Seed   uint64        `json:"seed"`
	Rows   []describeRow `json:"rows"`
}

func describeCommand() *cli.Command {
	return &cli.Command{
		Name:      "describe",
		Usage:     "print a named source's p and q: per context and position (pools) or state (model pairs) V, entropies, alpha = sum min(p,q), top tokens, and the full rows for V <= 16",
		ArgsUsage: "SOURCE",
		Description: `SOURCE is a --source spec ('simulate list sources'), e.g.
  simulate describe markov:V=3,order=1
  simulate describe dirichlet:V=1000,contexts=2 --gamma 2
A Markov pair is printed per state; another kind's model pair by its rows
after the empty prefix (state ^), which are all of a context-free pair's.`,
		Flags: []cli.Flag{gammaFlag("draft positions per context (pools)"), seedFlag(), jsonFlag()},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return diag.Usage(fmt.Errorf("describe takes one SOURCE argument (see 'simulate list sources'), got %d", c.NArg()))
			}
			seed := masterSeed(c)
			src, err := source.New(c.Args().First(), c.Int("gamma"), seed, memBudget(c))
			if err != nil {
				return diag.Usage(err)
			}
			out, err := describeSource(src, seed)
			if err != nil {
				return diag.Usage(err)
			}
			return printResult(c, out, func(w io.Writer) { writeDescribe(w, out) })
		},
	}
}

func describeSource(src sim.Source, seed uint64) (describeJSON, error) {
	out := describeJSON{Source: src.Spec, Seed: seed}
	if pl, ok := sim.PoolOf(src); ok {
		out.Kind, out.V, out.Gamma = "pool", pl.V, pl.Gamma
		for k := 0; k < pl.Contexts; k++ {
			for i := 0; i < pl.Gamma; i++ {
				p := sim.Float64s(nil, pl.PRow(k, i))
				q := sim.Float64s(nil, pl.QRow(k, i))
				sim.Normalize(p)
				sim.Normalize(q)
				out.Rows = append(out.Rows, rowOf(k, i+1, "", p, q))
			}
		}
		return out, nil
	}
	pr, ok := sim.PairOf(src)
	if !ok {
		return out, fmt.Errorf("source %s is neither a pool nor a model pair", src.Spec)
	}
	pm, okP := pr.P.(*sim.Markov)
	qm, okQ := pr.Q.(*sim.Markov)
	if !okP || !okQ || len(pm.Rows) != len(qm.Rows) {
		// Another kind's pair: its rows after the empty prefix (all of a
		// context-free pair's rows).
		v := pr.P.Vocab()
		if pr.Q.Vocab() != v {
			return out, fmt.Errorf("source %s: target V = %d but draft V = %d", src.Spec, v, pr.Q.Vocab())
		}
		p, q := make([]float64, v), make([]float64, v)
		pr.P.Next(nil, p)
		pr.Q.Next(nil, q)
		out.Kind, out.V = "pair", v
		out.Rows = append(out.Rows, rowOf(0, 0, "^", p, q))
		return out, nil
	}
	out.Kind, out.V = "pair", pm.V
	for s := range pm.Rows {
		out.Rows = append(out.Rows, rowOf(s, 0, stateTokens(s, pm.V, pm.K), pm.Rows[s], qm.Rows[s]))
	}
	return out, nil
}

// stateTokens decodes a Markov state (base V+1, start symbol V) into its
// context tokens, "^" for the start symbol.
func stateTokens(s, v, k int) string {
	parts := make([]string, k)
	for j := k - 1; j >= 0; j-- {
		d := s % (v + 1)
		s /= v + 1
		if d == v {
			parts[j] = "^"
		} else {
			parts[j] = fmt.Sprint(d)
		}
	}
	return strings.Join(parts, " ")
}

// rowOf describes one row pair; pos is the draft position from 1 (0: none,
// a model pair's state).
func rowOf(ctx, pos int, state string, p, q []float64) describeRow {
	var at *int
	if pos > 0 {
		at = &pos
	}
	r := describeRow{Context: ctx, Position: at, State: state, EntropyP: sim.Entropy(p), EntropyQ: sim.Entropy(q), Alpha: sim.Alpha(p, q),
		TopP: top(p), TopQ: top(q)}
	if len(p) <= describeFullV {
		r.P, r.Q = p, q
	}
	return r
}

func top(p []float64) []token {
	var out []token
	for _, t := range sim.TopTokens(nil, p, min(describeTop, len(p))) {
		out = append(out, token{t, p[t]})
	}
	return out
}

func writeDescribe(w io.Writer, d describeJSON) {
	fmt.Fprintf(w, "%s: %s, V = %d", d.Source, d.Kind, d.V)
	if d.Kind == "pool" {
		fmt.Fprintf(w, ", gamma = %d, %d contexts", d.Gamma, len(d.Rows)/max(d.Gamma, 1))
	}
	fmt.Fprintf(w, ", seed %d; entropies in nats, alpha = sum min(p, q)\n", d.Seed)
	for _, r := range d.Rows {
		if d.Kind == "pool" {
			fmt.Fprintf(w, "context %d, position %d:", r.Context, *r.Position)
		} else {
			fmt.Fprintf(w, "state %d (context %s):", r.Context, r.State)
		}
		fmt.Fprintf(w, " H(p) %.4f  H(q) %.4f  alpha %.4f\n", r.EntropyP, r.EntropyQ, r.Alpha)
		if r.P != nil {
			fmt.Fprintf(w, "  p = %s\n  q = %s\n", fmtRow(r.P), fmtRow(r.Q))
			continue
		}
		fmt.Fprintf(w, "  top p: %s\n  top q: %s\n", fmtTop(r.TopP), fmtTop(r.TopQ))
	}
}

func fmtRow(p []float64) string {
	parts := make([]string, len(p))
	for i, v := range p {
		parts[i] = fmt.Sprintf("%.4f", v)
	}
	return strings.Join(parts, " ")
}

func fmtTop(ts []token) string {
	parts := make([]string, len(ts))
	for i, t := range ts {
		parts[i] = fmt.Sprintf("%d:%.4f", t.Token, t.Prob)
	}
	return strings.Join(parts, "  ")
}

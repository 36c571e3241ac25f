package external

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/specsim/specsim/data"
	"github.com/specsim/specsim/sim"
)

// RowConfig is one kind of row in a batch composed like a serving
// engine's (Config.Rows): its sampling parameters, its draft length and
// whether it carries a seed.
type RowConfig struct {
	// Sampling is the row's sampling (Temperature 0: greedy). The row is
	// judged against the target law after these transforms, and its
	// drafts are drawn from the draft law after them.
	Sampling data.Sampling
	// Gamma is the row's draft length, 1..γ (0: the run's γ). Drafts
	// beyond it are sent as -1, and the row may emit at most Gamma+1
	// tokens.
	Gamma int
	// Seeded rows carry a seed (the batch's "seed" array, -1 for the
	// others): their output must be a function of their inputs and seed,
	// whatever else is in the batch (the determinism component).
	Seeded bool
}

// samplingOff is the sampling that changes nothing.
var samplingOff = data.Sampling{Temperature: 1, TopP: 1}

// String renders c as ParseRows reads it.
func (c RowConfig) String() string {
	var parts []string
	s := c.Sampling
	if s.Greedy() {
		parts = append(parts, "greedy")
	} else {
		parts = append(parts, "t="+strconv.FormatFloat(s.Temperature, 'g', -1, 64))
		if s.TopK > 0 {
			parts = append(parts, "top_k="+strconv.Itoa(s.TopK))
		}
		if s.TopP < 1 {
			parts = append(parts, "top_p="+strconv.FormatFloat(s.TopP, 'g', -1, 64))
		}
		if s.MinP > 0 {
			parts = append(parts, "min_p="+strconv.FormatFloat(s.MinP, 'g', -1, 64))
		}
	}
	if c.Gamma > 0 {
		parts = append(parts, "gamma="+strconv.Itoa(c.Gamma))
	}
	if c.Seeded {
		parts = append(parts, "seeded")
	}
	return strings.Join(parts, ",")
}

// EngineRows is the preset batch composition "engine": greedy rows, rows
// with temperature and top-k, top-p or min-p, full and short drafts, and
// seeded rows mixed with unseeded ones.
const EngineRows = "greedy;greedy,gamma=2,seeded;t=0.7,top_k=50,seeded;t=1;t=1,top_p=0.9,gamma=2;t=0.8,min_p=0.05,gamma=3,seeded"

// ParseRows reads a batch composition: "engine" (EngineRows) or row kinds
// separated by ';', each a ','-separated list of greedy, seeded,
// t=T (temperature), top_k=K, top_p=P, min_p=M and gamma=G, e.g.
// "greedy;t=0.7,top_k=50,seeded;t=1,gamma=2". Unset parameters are off
// (temperature 1).
func ParseRows(spec string) ([]RowConfig, error) {
	if strings.TrimSpace(spec) == "engine" {
		spec = EngineRows
	}
	var out []RowConfig
	for i, kind := range strings.Split(spec, ";") {
		c := RowConfig{Sampling: samplingOff}
		for _, f := range strings.Split(kind, ",") {
			f = strings.TrimSpace(f)
			key, val, hasVal := strings.Cut(f, "=")
			bad := func(err error) error {
				return fmt.Errorf("rows: kind %d (%q): %s: %v; keys are greedy, seeded, t, top_k, top_p, min_p, gamma", i+1, kind, f, err)
			}
			var err error
			switch {
			case f == "greedy":
				c.Sampling.Temperature = 0
			case f == "seeded":
				c.Seeded = true
			case !hasVal:
				return nil, bad(fmt.Errorf("not key=value"))
			case key == "t" || key == "temperature":
				c.Sampling.Temperature, err = strconv.ParseFloat(val, 64)
			case key == "top_k":
				c.Sampling.TopK, err = strconv.Atoi(val)
			case key == "top_p":
				c.Sampling.TopP, err = strconv.ParseFloat(val, 64)
			case key == "min_p":
				c.Sampling.MinP, err = strconv.ParseFloat(val, 64)
			case key == "gamma":
				c.Gamma, err = strconv.Atoi(val)
			case key == "seeded":
				c.Seeded, err = strconv.ParseBool(val)
			default:
				return nil, bad(fmt.Errorf("unknown key"))
			}
			if err != nil {
				return nil, bad(err)
			}
		}
		if err := c.Sampling.Validate(); err != nil {
			return nil, fmt.Errorf("rows: kind %d (%q): %v", i+1, kind, err)
		}
		out = append(out, c)
	}
	return out, nil
}

// checkRows checks a composition against the run's γ.
func checkRows(rows []RowConfig, gamma int) error {
	for i, c := range rows {
		if err := c.Sampling.Validate(); err != nil {
			return fmt.Errorf("rows: kind %d: %v", i+1, err)
		}
		if c.Gamma < 0 || c.Gamma > gamma {
			return fmt.Errorf("rows: kind %d: gamma = %d; use 1..%d (0: the run's gamma)", i+1, c.Gamma, gamma)
		}
	}
	return nil
}

// perRowArrays names the per-row arrays of a composed batch.
func perRowArrays(rows []RowConfig) []string {
	if len(rows) == 0 {
		return nil
	}
	return []string{"temperature", "top_k", "top_p", "min_p", "gamma", "seed"}
}

// gammaOf returns the draft length of rows of kind c in a run of γ = g.
func (c RowConfig) gammaOf(g int) int {
	if c.Gamma > 0 {
		return c.Gamma
	}
	return g
}

// ComposePool returns the pool check tests a composed run against: its
// context c·R + r (R = len(rows)) is context c of pl with every row
// through rows[r].Sampling (greedy rows become one-hot at the argmax), so
// trial t, in context t mod (C·R), is a row of kind t mod R, and
// neighbouring rows of a batch differ in kind. The implementation holds
// pl's raw rows and gets context c with the row's parameters.
func ComposePool(pl *sim.Pool, rows []RowConfig) (*sim.Pool, error) {
	if len(rows) == 0 {
		return nil, fmt.Errorf("rows: no row kinds")
	}
	if err := checkRows(rows, pl.Gamma); err != nil {
		return nil, err
	}
	g, v, r := pl.Gamma, pl.V, len(rows)
	var tr data.Transformer
	logits := make([]float32, v)
	transform := func(s data.Sampling, src []float32) ([]float32, error) {
		for x, p := range src {
			logits[x] = float32(math.Log(float64(p)))
		}
		dst := make([]float32, v)
		return dst, tr.Apply(s, dst, logits)
	}
	var p, q [][]float32
	names := make([]string, r)
	for k, c := range rows {
		names[k] = c.String()
	}
	for c := 0; c < pl.Contexts; c++ {
		for k := range rows {
			s := rows[k].Sampling
			for i := 0; i <= g; i++ {
				row, err := transform(s, pl.P[c*(g+1)+i])
				if err != nil {
					return nil, fmt.Errorf("rows: context %d, kind %d: %v", c, k+1, err)
				}
				p = append(p, row)
			}
			for i := 0; i < g; i++ {
				row, err := transform(s, pl.Q[c*g+i])
				if err != nil {
					return nil, fmt.Errorf("rows: context %d, kind %d: %v", c, k+1, err)
				}
				q = append(q, row)
			}
		}
	}
	return sim.PoolFromRows(pl.Name+" | rows "+strings.Join(names, ";"), g, p, q)
}

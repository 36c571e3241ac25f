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
	// Branch, in tree mode, is the row kind's children per depth (the
	// run's drafter with this branching; its length is the kind's tree
	// depth); nil: the run's --branch or k and γ.
	Branch []int
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
	if len(c.Branch) > 0 {
		b := make([]string, len(c.Branch))
		for i, x := range c.Branch {
			b[i] = strconv.Itoa(x)
		}
		parts = append(parts, "branch="+strings.Join(b, "x"))
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
// t=T (temperature), top_k=K, top_p=P, min_p=M, gamma=G and (tree mode)
// branch=B1xB2x..., e.g. "greedy;t=0.7,top_k=50,seeded;t=1,gamma=2".
// Unset parameters are off (temperature 1). A key given twice in one kind
// ("t=0.7,t=1", or greedy with t) is refused, as are two kinds alike.
func ParseRows(spec string) ([]RowConfig, error) {
	if strings.TrimSpace(spec) == "engine" {
		spec = EngineRows
	}
	var out []RowConfig
	seen := map[string]int{}
	for i, kind := range strings.Split(spec, ";") {
		c := RowConfig{Sampling: samplingOff}
		keys := map[string]string{}
		for _, f := range strings.Split(kind, ",") {
			f = strings.TrimSpace(f)
			key, val, hasVal := strings.Cut(f, "=")
			bad := func(err error) error {
				return fmt.Errorf("rows: kind %d (%q): %s: %v; keys are greedy, seeded, t, top_k, top_p, min_p, gamma, branch", i+1, kind, f, err)
			}
			canon := rowKeys[key]
			if canon == "" && !hasVal {
				canon = rowKeys[f]
			}
			if prev, dup := keys[canon]; dup && canon != "" {
				return nil, bad(fmt.Errorf("%s is set twice in one kind (also %q); give each key once, or separate kinds with ';'", canon, prev))
			}
			keys[canon] = f
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
			case key == "branch":
				c.Branch, err = parseBranch(val)
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
		if j, dup := seen[c.String()]; dup {
			return nil, fmt.Errorf("rows: kinds %d and %d are both %q; give each kind once (the batch cycles through the kinds)", j+1, i+1, c.String())
		}
		seen[c.String()] = i
		out = append(out, c)
	}
	return out, nil
}

// rowKeys maps each key of ParseRows (and its aliases) to the parameter
// it sets: greedy sets the temperature as t does.
var rowKeys = map[string]string{"greedy": "t", "t": "t", "temperature": "t", "seeded": "seeded",
	"top_k": "top_k", "top_p": "top_p", "min_p": "min_p", "gamma": "gamma", "branch": "branch"}

// parseBranch reads a row kind's branching, children per depth joined by
// 'x' ("3x2x1").
func parseBranch(s string) ([]int, error) {
	var out []int
	for _, part := range strings.Split(s, "x") {
		b, err := strconv.Atoi(part)
		if err != nil || b < 1 || b > sim.MaxTreeNodes {
			return nil, fmt.Errorf("%q is not a branching: give children per depth joined by 'x', each 1..%d (e.g. branch=3x2x1)", s, sim.MaxTreeNodes)
		}
		out = append(out, b)
	}
	if len(out) > sim.MaxTreeDepth {
		return nil, fmt.Errorf("branching %q is %d deep; use at most %d depths", s, len(out), sim.MaxTreeDepth)
	}
	return out, nil
}

// checkRows checks a composition against the run's γ (the trees' depth
// in tree mode, where tree says so): branch= only in tree mode, no
// deeper than γ, and not beside a gamma= it contradicts.
func checkRows(rows []RowConfig, gamma int, tree bool) error {
	for i, c := range rows {
		if err := c.Sampling.Validate(); err != nil {
			return fmt.Errorf("rows: kind %d: %v", i+1, err)
		}
		if c.Gamma < 0 || c.Gamma > gamma {
			return fmt.Errorf("rows: kind %d: gamma = %d; use 1..%d (0: the run's gamma)", i+1, c.Gamma, gamma)
		}
		switch d := len(c.Branch); {
		case d > 0 && !tree:
			return fmt.Errorf("rows: kind %d: branch= shapes the trees of tree mode; drop it in chain modes (verify, step)", i+1)
		case d > gamma:
			return fmt.Errorf("rows: kind %d: branch= is %d deep; the run's trees are at most %d deep (raise the run's gamma or branching)", i+1, d, gamma)
		case d > 0 && c.Gamma > 0 && c.Gamma != d:
			return fmt.Errorf("rows: kind %d: gamma = %d but branch= is %d deep; give one of them (a branching's length is its depth)", i+1, c.Gamma, d)
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

// gammaOf returns the draft length (tree depth) of rows of kind c in a
// run of γ = g.
func (c RowConfig) gammaOf(g int) int {
	switch {
	case c.Gamma > 0:
		return c.Gamma
	case len(c.Branch) > 0:
		return len(c.Branch)
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
	if err := checkRows(rows, pl.Gamma, true); err != nil {
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

// branchOf returns the branching of rows of kind c in a run whose
// branching is branch (nil: none) and whose depth is depth: the kind's
// own, else the run's cut to the kind's depth.
func (c RowConfig) branchOf(branch []int, depth int) []int {
	if len(c.Branch) > 0 {
		return c.Branch
	}
	if len(branch) > 0 {
		return branch[:min(len(branch), c.gammaOf(depth))]
	}
	return nil
}

// conformKinds returns, per row kind, why a conformance test to the rule
// law (named name) leaves it out ("" for the kinds it tests: one entry
// per kind, nil when it tests every kind), and the note that says which
// it left out. A kind is left out when its rows draft fewer tokens than
// the run's γ (the law given γ drafts is not the law of a shorter chain)
// or when the law refuses its rows (a block of context 0 under the
// kind's sampling, from cp, the composed pool). No kind left: an error.
func conformKinds(rows []RowConfig, cp *sim.Pool, law sim.Lawer, name string) ([]string, string, error) {
	off := make([]string, len(rows))
	var left []string
	g := cp.Gamma
	rng := sim.NewRand(1, 0)
	var b sim.Block
	var l sim.Law
	for k, c := range rows {
		cp.Fill(rng, k, &b)
		switch err := law.Law(&b, &l); {
		case c.gammaOf(g) < g:
			off[k] = fmt.Sprintf("its rows draft %d tokens and %s's law is given the run's %d drafts", c.gammaOf(g), name, g)
		case err != nil:
			off[k] = fmt.Sprintf("%s's law refuses its rows: %v", name, err)
		}
		if off[k] != "" {
			left = append(left, fmt.Sprintf("%q (%s)", c.String(), off[k]))
		}
	}
	switch {
	case len(left) == len(rows):
		return nil, "", fmt.Errorf("conformance to %s tests no row kind: %s; give row kinds that draft the run's gamma %d", name, strings.Join(left, "; "), g)
	case len(left) == 0:
		return nil, "", nil
	}
	return off, fmt.Sprintf("the conformance test to %s left out row kinds %s; their rows are still checked for invalid outcomes (and seeded ones for determinism)", name, strings.Join(left, ", ")), nil
}

// kindName returns "row kind K, " for a row of a composed run in context
// ctx (ComposePool's c·R + r), or "" outside one: the determinism
// component's examples name the kind of the seeded row that failed.
func (im *Impl) kindName(ctx int) string {
	if k, _ := im.kindOf(&sim.Block{Ctx: ctx}); k >= 0 {
		return fmt.Sprintf("row kind %q, ", im.cfg.Rows[k].String())
	}
	return ""
}

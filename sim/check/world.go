package check

import (
	"cmp"
	"context"
	"math"
	"slices"

	"github.com/specsim/specsim/sim"
)

// world is the source and the cell layouts of one check.
type world struct {
	g, v, nc int
	pool     *sim.Pool
	pair     *sim.Pair
	target   sim.Model
	// pools: fine bins per (context, position) sorted by p/q, their target
	// masses, the target alias tables, and the coarse bins of the joint
	// test.
	bins   int
	binOf  []uint16
	binP   []float64
	pAlias []*sim.Alias
	jb     int
	// pairs: target states (the last `order` tokens), their rows, the law
	// bins of each state's tokens, and the full joint when it fits.
	states   int
	stateOf  func([]int) int
	stateRow [][]float64
	oneHot   bool
	jointLen int
	// positional models of each pool context (tree rules).
	posP, posQ []sim.Model
	// pools: the PIT tables of every (context, position) row.
	pitTab []pitTable
}

func (w *world) poolIdx(c, i int) int { return c*(w.g+1) + i }

func newPoolWorld(ctx context.Context, pl *sim.Pool, trials int64) (*world, error) {
	g, v, nc := pl.Gamma, pl.V, pl.Contexts
	w := &world{g: g, v: v, nc: nc, pool: pl}
	perCtx := max(trials/int64(nc), 1)
	w.bins = int(min(int64(maxBins), max(lawBins, perCtx/minPerBin)))
	w.bins -= w.bins % lawBins // coarse bins nest in the fine ones
	w.jb = 2
	for pow(w.jb+1, g+1) <= int(perCtx/minPerBin) && w.jb+1 <= lawBins {
		w.jb++
	}
	bins := w.bins
	w.binOf = make([]uint16, nc*(g+1)*v)
	w.binP = make([]float64, nc*(g+1)*bins)
	w.pAlias = make([]*sim.Alias, nc*(g+1))
	w.pitTab = make([]pitTable, nc*(g+1))
	// order sorts the tokens by (p/q, token): the token breaks ties, so
	// the binning is that of a stable sort by p/q.
	type keyed struct {
		k float64
		x int32
	}
	order := make([]keyed, v)
	p64 := make([]float64, v)
	for c := 0; c < nc; c++ {
		for i := 0; i <= g; i++ {
			// V = 32000: ~1 ms a row; V = 4,194,304: the alias table and
			// each of its two sorts about half a second, so SIGINT waits
			// for one of them at most
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			sim.Float64s(p64, pl.PRow(c, i))
			w.pAlias[w.poolIdx(c, i)] = sim.NewAlias(p64)
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			w.pitTab[w.poolIdx(c, i)] = newPITTable32(p64)
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			for x := range order {
				k := p64[x]
				if i < g {
					if qx := float64(pl.QRow(c, i)[x]); qx > 0 {
						k = p64[x] / qx
					} else {
						k = math.Inf(1)
					}
				}
				order[x] = keyed{k, int32(x)}
			}
			slices.SortFunc(order, func(a, b keyed) int {
				if c := cmp.Compare(a.k, b.k); c != 0 {
					return c
				}
				return cmp.Compare(a.x, b.x)
			})
			tot := 0.0
			for _, o := range order {
				tot += p64[o.x]
			}
			cum := 0.0
			base := w.poolIdx(c, i) * v
			pb := w.binP[w.poolIdx(c, i)*bins:]
			for _, o := range order {
				x := int(o.x)
				b := min(int(cum/tot*float64(bins)), bins-1)
				w.binOf[base+x] = uint16(b)
				pb[b] += p64[x] / tot
				cum += p64[x]
			}
		}
	}
	return w, nil
}

// posModel is a pool context as a sim.Model for the tree drafters: the row
// at position len(ctx), whatever the tokens.
type posModel [][]float64

func (m posModel) Vocab() int                    { return len(m[0]) }
func (m posModel) Next(ctx []int, dst []float64) { copy(dst, m[min(len(ctx), len(m)-1)]) }

// RowView lends the row Next copies (sim.RowViewer): tree drafting over a
// pool copies no rows.
func (m posModel) RowView(ctx []int) sim.Row { return sim.F64(m[min(len(ctx), len(m)-1)]) }

func (w *world) buildPos() {
	pl := w.pool
	for c := 0; c < w.nc; c++ {
		var p, q posModel
		for i := 0; i <= w.g; i++ {
			p = append(p, sim.Float64s(nil, pl.PRow(c, i)))
			if i < w.g {
				q = append(q, sim.Float64s(nil, pl.QRow(c, i)))
			}
		}
		w.posP, w.posQ = append(w.posP, p), append(w.posQ, q)
	}
}

func newPairWorld(pr *sim.Pair, g int, greedy bool) (*world, error) {
	if err := pr.Check(); err != nil {
		return nil, err
	}
	v := pr.P.Vocab()
	w := &world{g: g, v: v, nc: 1, pair: pr, target: pr.P}
	if greedy {
		w.target = sim.Greedy{M: pr.P}
		w.oneHot = true
	}
	var reps [][]int
	switch mk := sim.MarkovOf(pr.P); {
	case mk != nil:
		w.states = len(mk.Rows)
		w.stateOf = mk.State
		for s := 0; s < w.states; s++ {
			var rep []int
			for j, c := mk.K-1, s; j >= 0; j-- {
				if d := c % (v + 1); d != v {
					rep = append([]int{d}, rep...)
				}
				c /= v + 1
			}
			reps = append(reps, rep)
		}
	default:
		if _, ok := pr.P.(sim.Fixed); ok {
			w.states, w.stateOf = 1, func([]int) int { return 0 }
			reps = [][]int{nil}
		}
		// Any other model: its law given the prefix has no finite state
		// to group by, so there are no per-state tests; the PIT tests,
		// which read the target's rows after each emitted prefix, see the
		// whole emitted law of any model.
	}
	for _, rep := range reps {
		row := make([]float64, v)
		w.target.Next(rep, row)
		w.stateRow = append(w.stateRow, row)
	}
	if pow(v, g+1) <= maxJointCells {
		w.jointLen = g + 1
	}
	return w, nil
}

// seqLaw returns the target law of the first l tokens from the empty
// context, indexed base-v with the first token most significant.
func seqLaw(m sim.Model, v, l int) []float64 {
	law := []float64{1}
	row := make([]float64, v)
	seq := make([]int, 0, l)
	for d := 0; d < l; d++ {
		next := make([]float64, len(law)*v)
		for code, w := range law {
			if w == 0 {
				continue
			}
			seq = seq[:d]
			for j, c := d-1, code; j >= 0; j-- {
				seq[j] = c % v
				c /= v
			}
			m.Next(seq, row)
			for t, pt := range row {
				next[code*v+t] = w * pt
			}
		}
		law = next
	}
	return law
}

package external

import (
	"fmt"
	"slices"
	"strings"

	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/sim/check"
)

// maxReplay bounds the seeded rows kept for the determinism replay.
const maxReplay = 256

// replaySeed is the batch seed of the determinism replay (any seed other
// than the check's batches' serves).
const replaySeed = 0x5eed5eed5eed5eed

// replayRow is a seeded row as first sent and answered.
type replayRow struct {
	block           sim.Block
	seed, step      int64
	emitted, drafts []int64
}

// determinism keeps the first maxReplay seeded rows of a composed run.
type determinism struct {
	rows  []replayRow
	trees []replayTree // tree mode's
}

func (d *determinism) keep(b sim.Block, seed, step int64, emitted, drafts []int64) {
	if len(d.rows) >= maxReplay {
		return
	}
	nb := sim.Block{Tokens: slices.Clone(b.Tokens), P: slices.Clone(b.P), Q: slices.Clone(b.Q), Ctx: b.Ctx}
	d.rows = append(d.rows, replayRow{block: nb, seed: seed, step: step, emitted: slices.Clone(emitted), drafts: slices.Clone(drafts)})
}

// Determinism sends the kept seeded rows again in one batch — in reverse
// order, each followed by an unseeded copy of itself, under another batch
// seed — and compares each seeded row's answer with its first: a seeded
// row's output must depend on its inputs and its seed only, as engines
// promise, not on its neighbours, its place in the batch or the batch's
// generator. It returns the "determinism" component, or false when the
// run had no seeded rows.
func (im *Impl) Determinism() (check.Component, bool, error) {
	if im.cfg.Mode == Tree {
		return im.treeDeterminism()
	}
	rows := im.det.rows
	if len(rows) == 0 {
		return check.Component{}, false, nil
	}
	var bs []sim.Block
	var seeds []int64
	for i := len(rows) - 1; i >= 0; i-- {
		r := rows[i].block
		twin := sim.Block{Tokens: slices.Clone(r.Tokens), P: r.P, Q: r.Q, Ctx: r.Ctx}
		bs = append(bs, sim.Block{Tokens: slices.Clone(r.Tokens), P: r.P, Q: r.Q, Ctx: r.Ctx}, twin)
		seeds = append(seeds, rows[i].seed, -1)
	}
	var bad []string
	nbad := 0
	outs := make([]sim.Outcome, len(bs))
	err := im.steps(batchOpts{seed: replaySeed, coins: coinsRandom, seeds: seeds, got: func(i int, emitted, drafts []int64) {
		if i%2 != 0 {
			return
		}
		r := rows[len(rows)-1-i/2]
		same := slices.Equal(emitted, r.emitted) && (r.drafts == nil || drafts == nil || slices.Equal(drafts, r.drafts))
		if same {
			return
		}
		nbad++
		if len(bad) < maxExamples {
			ex := fmt.Sprintf("step %d (%sseed %d): emitted %v, then %v", r.step, im.kindName(r.block.Ctx), r.seed, trim(r.emitted), trim(emitted))
			if r.drafts != nil && drafts != nil && !slices.Equal(drafts, r.drafts) {
				ex += fmt.Sprintf(" (drafts %v, then %v)", trim(r.drafts), trim(drafts))
			}
			bad = append(bad, ex)
		}
	}}, bs, outs)
	if err != nil {
		return check.Component{}, false, fmt.Errorf("%v (determinism replay)", err)
	}
	return determinismComponent(len(rows), nbad, bad), true, nil
}

// determinismComponent is the determinism component of a replay of n
// seeded rows of which nbad answered otherwise (bad: examples).
func determinismComponent(n, nbad int, bad []string) check.Component {
	c := check.Component{Name: "determinism", Verdict: check.NotDetected,
		Detail: fmt.Sprintf("%d seeded rows sent again in one batch (reversed, each next to an unseeded copy of itself, another batch seed) gave the same tokens", n)}
	if nbad > 0 {
		c.Verdict = check.Violated
		c.Detail = fmt.Sprintf("%d of %d seeded rows sent again in one batch (reversed, each next to an unseeded copy of itself, another batch seed) gave other tokens: the output of a seeded row depends on more than its inputs and seed; e.g. %s", nbad, n, strings.Join(bad, "; "))
	}
	return c
}

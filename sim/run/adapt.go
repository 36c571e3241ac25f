package run

import "github.com/specsim/specsim/sim"

// Blocks returns the chain drafter that fills each round from src: a pool
// picks the round's context from the Source stream and draws the draft
// from the Draft stream; any other source (a sim.Chain over a model pair)
// draws from the Draft stream.
func Blocks(src sim.BlockSource) ChainDrafter {
	if s, ok := src.(sim.Source); ok {
		src = s.BlockSource
	}
	if pl, ok := src.(*sim.Pool); ok {
		return pool{pl}
	}
	return blocks{src}
}

type blocks struct{ src sim.BlockSource }

func (b blocks) DraftChain(r *Round, dst *sim.Block) error { return b.src.Next(r.Rand(Draft), dst) }

type pool struct{ pl *sim.Pool }

func (p pool) DraftChain(r *Round, dst *sim.Block) error {
	p.pl.Fill(r.Rand(Draft), r.Rand(Source).IntN(p.pl.Contexts), dst)
	return nil
}

// Cycle returns the chain drafter that puts trial t in context t mod
// pl.Contexts of the pool and draws the draft from the round's Draft
// stream, so every context gets the same share of trials.
func Cycle(pl *sim.Pool) ChainDrafter { return cycle{pl} }

type cycle struct{ pl *sim.Pool }

func (c cycle) DraftChain(r *Round, dst *sim.Block) error {
	c.pl.Fill(r.Rand(Draft), int(r.Trial%int64(c.pl.Contexts)), dst)
	return nil
}

// CycleTrees returns the tree drafter that draws trial t's tree from
// ds[t mod len(ds)] after the empty context (Draft stream) and fills its
// target rows from targets[t mod len(ds)]: one drafter per context of a
// pool, every context getting the same share of trials (Cycle's tree
// form); the tree's Ctx is set to t mod len(ds). A single drafter and
// target draw every round's tree. It panics
// unless there is one target per drafter and at least one of each.
func CycleTrees(ds []sim.Drafter, targets []sim.Model) TreeDrafter {
	if len(ds) == 0 || len(ds) != len(targets) {
		panic("run: CycleTrees needs one target per drafter")
	}
	return cycleTrees{ds, targets}
}

type cycleTrees struct {
	ds      []sim.Drafter
	targets []sim.Model
}

func (c cycleTrees) DraftTree(r *Round, dst *sim.Tree) error {
	i := int(r.Trial % int64(len(c.ds)))
	sim.DraftTree(r.Rand(Draft), c.ds[i], c.targets[i], nil, dst)
	dst.Ctx = i
	return nil
}

// Given is the chain drafter of rounds whose draft is given rather than
// drawn: each round verifies a shallow copy of *B (a logged step, a
// scripted block). Set B before each round; Given draws no randomness.
type Given struct{ B *sim.Block }

// DraftChain points dst at *g.B's tokens and rows.
func (g *Given) DraftChain(_ *Round, dst *sim.Block) error {
	*dst = *g.B
	return nil
}

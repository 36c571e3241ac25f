package check

import (
	"fmt"
	"slices"

	"gonum.org/v1/gonum/floats"

	"github.com/specsim/specsim/internal/binenc"
	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/sim/stattest"
)

// The law family ranks last.
func init() {
	registerFamily(50, func(rn *runner) Family {
		if !rn.lawOn {
			return nil
		}
		return &lawFamily{rn: rn}
	})
}

// lawFamily is the law test (the package doc's step 3): each sampled
// step's outcome against an exact conditional law given its drafts, the
// rule's own (sampler vs own law) or, with Rule.Conform, a named rule's
// (conformance), on every LawEvery-th trial. A chunk's state is a
// stattest.Hetero filled by AddBlocks; a merged one holds the exact sums
// of its chunks' (stattest.HeteroSum).
type lawFamily struct {
	rn  *runner
	het *stattest.Hetero
	sum *stattest.HeteroSum
}

func (f *lawFamily) name() string { return LawFamily }

// LawFamily names the family of the sampler-vs-law or conformance test
// (Test.Family).
const LawFamily = "law"

func (f *lawFamily) byKind() bool  { return true }
func (f *lawFamily) emitted() bool { return false }

// add computes the law of the round's drafts (every LawEvery-th trial
// of a kind not left out) and counts its outcome's cell.
func (f *lawFamily) add(o *roundObs) {
	rn, sc, w := f.rn, o.sc, f.rn.w
	if o.r.Trial%rn.lawEvery != 0 || rn.lawOff(o.r) {
		return
	}
	if f.het == nil {
		f.het = stattest.NewHetero(rn.lawCells())
	}
	clear(sc.mass)
	var row []float64
	if o.tree != nil {
		rn.rule.TreeLaw.TreeLaw(o.tree, &sc.tlaw)
		for nd := range o.tree.Nodes {
			rn.addLawRow(sc.mass, o.tree.Nodes[nd].Depth, sc.tlaw.P[nd*(w.v+1):(nd+1)*(w.v+1)])
		}
		row = sc.tlaw.P[o.node*(w.v+1) : (o.node+1)*(w.v+1)]
		f.het.AddBlocks(rn.lawWidths, sc.mass, rn.lawObs(o.depth, o.next, row, o.r.Trial))
		return
	}
	rn.rule.Law.Law(o.b, &sc.law)
	for a := 0; a <= w.g; a++ {
		rn.addLawRow(sc.mass, a, sc.law.P[a*(w.v+1):(a+1)*(w.v+1)])
	}
	row = sc.law.P[o.o.Accepted*(w.v+1) : (o.o.Accepted+1)*(w.v+1)]
	f.het.AddBlocks(rn.lawWidths, sc.mass, rn.lawObs(o.o.Accepted, o.o.Next, row, o.r.Trial))
}

// merge sums src's accumulator (a chunk's) or exact sums (a merged
// state's) into f's exact sums.
func (f *lawFamily) merge(src Family) error {
	s := src.(*lawFamily)
	return addLaw(&f.sum, s.het, s.sum)
}

// appendBinary writes the exact sums (a flag, the cells, the sums).
func (f *lawFamily) appendBinary(b []byte) []byte {
	if f.sum == nil {
		return binenc.AppendVarint(b, 0)
	}
	b = binenc.AppendVarint(b, 1)
	b = binenc.AppendVarint(b, int64(f.sum.K()))
	return f.sum.AppendBinary(b)
}

// readBinary reads what appendBinary wrote, refusing another layout.
func (f *lawFamily) readBinary(r *binenc.Reader) {
	if r.Int("law flag", 0, 1) == 0 {
		return
	}
	k := int(r.Int("law cells", 1, (sim.MaxGamma+1)*maxLawTestBins+2))
	if r.Err() == nil && k != f.rn.lawCells() {
		r.Fail(fmt.Errorf("the law test has %d cells where this configuration has %d", k, f.rn.lawCells()))
	}
	if r.Err() != nil {
		return
	}
	f.sum = stattest.ReadHeteroSum(r, k)
	if r.Err() == nil && f.sum.Blocks() != nil && !slices.Equal(f.sum.Blocks(), f.rn.lawWidths) {
		r.Fail(fmt.Errorf("the law test's blocks %v are not this configuration's %v", f.sum.Blocks(), f.rn.lawWidths))
	}
}

// tests yields the law test, unless kind is left out of it.
func (f *lawFamily) tests(kind int) ([]Pending, error) {
	rn := f.rn
	if kind >= 0 && rn.cfg.LawKindsOff != nil && rn.cfg.LawKindsOff[kind] != "" {
		return nil, nil
	}
	het := stattest.NewHetero(rn.lawCells())
	if f.sum != nil {
		het = f.sum.Hetero()
	}
	h := het.Test(stattest.DefaultMinExpected)
	name, what := "sampler vs own law", "the rule's own exact law"
	if rn.rule.Conform {
		name, what = "conformance to "+rn.rule.LawName, rn.rule.LawName+"'s exact law"
	}
	lb, cells := rn.lb, rn.lawCells()
	steps := "each step's"
	if rn.lawEvery > 1 {
		steps = fmt.Sprintf("every %s step's", ordinal(rn.lawEvery))
	}
	return []Pending{{name: name, het: &h, hetero: het,
		quantity: fmt.Sprintf("TV between the step-averaged outcome law and %s given %s drafts, on cells (accepted length, %d equal-mass bins of the next token's PIT under that law)", what, steps, rn.lb),
		cell: func(_, c int) string {
			switch c {
			case cells - 2:
				return "no next token"
			case cells - 1:
				return "outcomes the law makes impossible"
			}
			return fmt.Sprintf("accepted length %d, next token's PIT bin %d of %d under the law", c/lb, c%lb+1, lb)
		}}}, nil
}

// lawCells is the number of cells of the law test: (accepted length a,
// bin k of the next token's PIT under the law given a), then one for "no
// next token" and one for outcomes the law gives probability zero.
func (rn *runner) lawCells() int { return (rn.w.g+1)*rn.lb + 2 }

// lawBlocks is the law test's cells as blocks of equal probability for
// stattest.Hetero.AddBlocks: the lb bins of each accepted length share its
// mass (the PIT of the next token under its own law is uniform), then
// "no next token" and the impossible cell, one cell each.
func (rn *runner) lawBlocks() []int {
	wd := make([]int, rn.w.g+3)
	for a := range wd {
		wd[a] = 1
		if a <= rn.w.g {
			wd[a] = rn.lb
		}
	}
	return wd
}

// addLawRow adds the law row of an accepted length (or, for trees, of a
// node) at depth a — row[0] the mass of "no next token", row[1+t] that of
// next token t — into the law test's block masses (lawBlocks): the mass
// of its next tokens to depth a's block, whose lb PIT bins share it
// evenly since the PIT of the next token under its own conditional law is
// uniform.
func (rn *runner) addLawRow(mass []float64, a int, row []float64) {
	mass[rn.w.g+1] += row[0]
	mass[a] += floats.Sum(row[1:])
}

// lawObs returns the law test's cell of an observed outcome at depth a
// with next token tok, given the law row of its accepted length (or node):
// "no next token", the impossible cell where the law gives the outcome
// probability zero, else (a, bin of the next token's randomised PIT under
// row in token order, the randomisation a keyed hash of the trial).
func (rn *runner) lawObs(a, tok int, row []float64, trial int64) int {
	cells := rn.lawCells()
	if tok == sim.NoToken {
		if row[0] > 0 {
			return cells - 2
		}
		return cells - 1
	}
	row = row[1:]
	p := row[tok]
	if !(p > 0) {
		return cells - 1
	}
	before, m := 0.0, 0.0
	for t, x := range row {
		if t < tok {
			before += x
		}
		m += x
	}
	v := float64(sim.StreamID("check/lawpit", rn.cfg.Seed, uint64(trial))>>11) * 0x1p-53
	return a*rn.lb + bin(min((before+v*p)/m, 1), rn.lb)
}

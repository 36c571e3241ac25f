package draft

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/specsim/specsim/sim"
)

// DraftHub is the kind of SpecHub's drafter (Hub), registered here so that
// sim needs no edit.
var DraftHub = sim.RegisterDraftKind("hub", true)

// Hub drafts the sparse pair of SpecHub (Sun, Zhou, Chen, Sun, "SpecHub:
// Provable Acceleration to Multi-Draft Speculative Decoding", EMNLP 2024,
// arXiv 2411.05289; the pair law as the authors' code states it,
// MasterGodzilla/Speculative_decoding_OT, EAGLE/eagle/model/utils.py).
// With the hub a = argmax q (ties to the lowest index), the ordered pair
// of drafts (first, second) at a node has the law
//
//	Q(i, a) = q(i),   Q(a, i) = q(a) q(i) / (1 − q(a)),   i ≠ a,
//
// and no other pair: the first draft is drawn from q, and the second is
// the hub when the first is not, else a draw from q without the hub. Both
// drafts become children in that order (Draws[0] is the first). The root
// gets K ≤ 2 children (K = 1: one draw from q) and every node below it one
// draw from q, to Depth; a node whose q has one token gets that token
// alone. SpecHub is defined for two drafts, so K > 2 is refused, and the
// shape is not set by Branch. Kind DraftHub.
type Hub struct{ *branching }

// hubMaxK is the number of drafts SpecHub's sparse joint is defined for.
const hubMaxK = 2

// NewHub returns the hub drafter: a hub pair at the root (k = 2) or one
// draw (k = 1), then chains to depth.
func NewHub(q sim.Model, k, depth int) (*Hub, error) {
	if k < 1 || k > hubMaxK {
		return nil, fmt.Errorf("drafter %s: k = %d; SpecHub's sparse joint is defined for two drafts, use k = 1 or 2", DraftHub, k)
	}
	b, err := newBranching(DraftHub, q, k, depth, nil, hubPick{})
	if err != nil {
		return nil, err
	}
	return &Hub{b}, nil
}

func init() {
	registerTree(DraftHub.String(), treeTraits{drawn: true, maxK: hubMaxK}, func(c Config) (Drafter, error) {
		if len(c.Branch) > 0 {
			return Drafter{}, BranchError(DraftHub.String())
		}
		d, err := NewHub(c.Q, c.K, c.Depth)
		return Drafter{Tree: nilIfErr(d, err)}, err
	})
}

// hubPick chooses a node's children: the hub pair for b = 2, one draw from
// q for b = 1 or a row with one token.
type hubPick struct{}

// HubToken returns the hub of row q: its most likely token, ties to the
// lowest index (-1 for an empty row).
func HubToken(q []float64) int {
	a := -1
	for x, v := range q {
		if v > 0 && (a < 0 || v > q[a]) {
			a = x
		}
	}
	return a
}

func (hubPick) draw(rng *rand.Rand, t *sim.Tree, n int, q []float64, b int) {
	total := rowSum(q)
	first := sampleExcluding(rng.Float64()*total, q, t, n)
	t.AddDraw(n, first)
	if b < 2 || sim.Support(q) < 2 {
		return
	}
	a := HubToken(q)
	if first != a {
		t.AddDraw(n, a)
		return
	}
	t.AddDraw(n, sampleExcluding(rng.Float64()*(total-q[a]), q, t, n))
}

func (hubPick) each(t *sim.Tree, n int, q []float64, b int, w float64, next func(float64) error) error {
	total := rowSum(q)
	if b < 2 || sim.Support(q) < 2 {
		for x, qx := range q {
			if qx <= 0 {
				continue
			}
			t.AddDraw(n, x)
			err := next(w * qx / total)
			t.UndoDraw(n, true)
			if err != nil {
				return err
			}
		}
		return nil
	}
	a := HubToken(q)
	qa := q[a] / total
	for x, qx := range q {
		if qx <= 0 || x == a {
			continue
		}
		qx /= total
		for _, pair := range []struct {
			first, second int
			w             float64
		}{{x, a, qx}, {a, x, qa * qx / (1 - qa)}} {
			t.AddDraw(n, pair.first)
			t.AddDraw(n, pair.second)
			err := next(w * pair.w)
			t.UndoDraw(n, true)
			t.UndoDraw(n, true)
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// logWays: 2(s − 1) ordered pairs for b = 2, s draws for b = 1.
func (hubPick) logWays(s, b int) float64 {
	if b >= 2 && s >= 2 {
		return math.Log(float64(2 * (s - 1)))
	}
	return math.Log(float64(s))
}

func rowSum(q []float64) float64 {
	s := 0.0
	for _, v := range q {
		if v > 0 {
			s += v
		}
	}
	return s
}

package draft_test

import (
	"errors"
	"math"
	"testing"

	"github.com/specsim/specsim/internal/diag"
	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/sim/draft"
)

// TestDelayedShape: a delayed tree of depth 3 over V = 3 is a path of
// Delay nodes with one draw each, then a branching node with K draws and
// one draw per chain below it, K candidates of depth 3; it has exactly
// 3^(Delay + K·(3 − Delay)) ordered draws (EstimateTrees, exact here since
// every row has full support) whose probabilities sum to 1; Delay = 0
// enumerates IID's trees with IID's weights.
func TestDelayedShape(t *testing.T) {
	pair := testPair(t)
	const k, depth = 2, 3
	for delay := 0; delay <= depth; delay++ {
		d, err := draft.NewTree(draft.DraftDelayed, draft.Config{Q: pair.Q, K: k, Depth: depth, Delay: delay})
		if err != nil {
			t.Fatal(err)
		}
		var tr sim.Tree
		d.Draft(sim.NewRand(4, uint64(delay)), nil, &tr)
		n := 0
		for i := range delay {
			if got := len(tr.Nodes[n].Draws); got != 1 {
				t.Fatalf("delay %d: path node %d has %d draws, want 1", delay, i, got)
			}
			n = tr.Nodes[n].Kids[0]
		}
		wantCands := k
		if delay < depth {
			if got := len(tr.Nodes[n].Draws); got != k {
				t.Errorf("delay %d: the branching node has %d draws, want %d", delay, got, k)
			}
		} else {
			wantCands = 1
		}
		if len(tr.Cands) != wantCands || tr.MaxDepth() != depth {
			t.Errorf("delay %d: %d candidates, depth %d; want %d, %d", delay, len(tr.Cands), tr.MaxDepth(), wantCands, depth)
		}
		w := enumerate(t, d, nil)
		draws := delay
		if delay < depth {
			draws += k * (depth - delay)
		}
		want := math.Pow(3, float64(draws))
		if est := d.(sim.TreeCounter).EstimateTrees(nil); math.Abs(est-want) > 1e-12*want { // exp∘log rounding
			t.Errorf("delay %d: EstimateTrees %g, want %g", delay, est, want)
		}
		count := 0
		if err := d.Enumerate(nil, func(*sim.Tree, float64) error { count++; return nil }); err != nil || float64(count) != want {
			t.Errorf("delay %d: %d ordered draws (%v), want %g", delay, count, err, want)
		}
		if delay == 0 {
			iid, _ := draft.NewTree(sim.DraftIID, draft.Config{Q: pair.Q, K: k, Depth: depth})
			for key, v := range enumerate(t, iid, nil) {
				if math.Abs(w[key]-v) > 1e-15 {
					t.Fatalf("delay 0: tree %s has weight %g, IID's %g", key, w[key], v)
				}
			}
		}
	}
}

// The delay is refused, as a usage error naming the field, by every
// drafter that does not read it and, outside [0, depth], by delayed.
func TestDelayRefused(t *testing.T) {
	q := sim.Fixed{0.5, 0.5}
	for _, name := range draft.Names() {
		_, err := draft.New(draft.Config{Name: name, Q: q, Heads: []sim.Model{q, q}, K: 2, Depth: 2, Delay: 1,
			Cands: [][]int{{1, 0}}, MaxNgram: 2})
		if draft.Delays(name) != (err == nil) {
			t.Errorf("%s: Delays %v, New(Delay=1) = %v", name, draft.Delays(name), err)
		}
		var pe *diag.ParamError
		if err != nil && (!errors.As(err, &pe) || pe.Name != "delay") {
			t.Errorf("%s: New(Delay=1) = %v, want a ParamError naming delay", name, err)
		}
	}
	for _, bad := range []int{-1, 3} {
		_, err := draft.NewTree(draft.DraftDelayed, draft.Config{Q: q, K: 2, Depth: 2, Delay: bad})
		var pe *diag.ParamError
		if !errors.As(err, &pe) || pe.Name != "delay" {
			t.Errorf("delay %d: err = %v, want a ParamError naming delay", bad, err)
		}
	}
}

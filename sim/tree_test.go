package sim

import (
	"fmt"
	"strings"
	"testing"
)

// TopTokens orders by q, largest first, ties to the lowest index, and
// skips tokens with q = 0.
func TestTopTokens(t *testing.T) {
	if got := TopTokens(nil, []float64{0.2, 0.3, 0.2, 0.3, 0}, 3); fmt.Sprint(got) != "[1 3 0]" {
		t.Errorf("TopTokens = %v, want [1 3 0]", got)
	}
	if got := TopTokens(nil, []float64{0.5, 0, 0.5}, 3); fmt.Sprint(got) != "[0 2]" {
		t.Errorf("TopTokens skips q = 0: got %v", got)
	}
}

// Every name of DraftKinds parses back to its kind; fixed (given, not
// drawn) and unknown names are errors that list the kinds.
func TestParseDraftKind(t *testing.T) {
	for _, k := range DraftKinds() {
		got, err := ParseDraftKind(k.String())
		if err != nil || got != k {
			t.Errorf("ParseDraftKind(%q) = %v, %v", k, got, err)
		}
	}
	for _, bad := range []string{"fixed", "nope", ""} {
		_, err := ParseDraftKind(bad)
		if err == nil || !strings.Contains(err.Error(), ": use iid, wor, topk") {
			t.Fatalf("ParseDraftKind(%q): err = %v", bad, err)
		}
		// the error lists every kind a name selects (registered ones too)
		list := err.Error()[strings.Index(err.Error(), ": use ")+len(": use "):]
		for _, k := range DraftKinds() {
			if !strings.Contains(list, k.String()) {
				t.Errorf("ParseDraftKind(%q): %q does not list %s", bad, err, k)
			}
		}
		if strings.Contains(list, DraftFixed.String()) {
			t.Errorf("ParseDraftKind(%q): %q lists fixed, which is not drawn", bad, err)
		}
	}
	if s := DraftKind(9).String(); s != "DraftKind(9)" {
		t.Errorf("String of an unknown kind = %q", s)
	}
}

// A drafter builds trees through AddDraw, QRow and UndoDraw; FillTarget
// gives every node its target row at the target's vocabulary.
func TestTreeBuilding(t *testing.T) {
	var tr Tree
	tr.Reset(2)
	copy(tr.QRow(0), []float64{0.25, 0.75})
	a := tr.AddDraw(0, 1)
	if b := tr.AddDraw(0, 1); b != a || len(tr.Nodes) != 2 || len(tr.Nodes[0].Draws) != 2 {
		t.Fatalf("a token drawn twice: nodes %d, draws %v", len(tr.Nodes), tr.Nodes[0].Draws)
	}
	c := tr.AddDraw(0, 0)
	tr.UndoDraw(0, true)
	if len(tr.Nodes) != 2 || tr.Child(0, 0) != -1 || c != 2 {
		t.Fatalf("UndoDraw left %d nodes, child of 0 = %d", len(tr.Nodes), tr.Child(0, 0))
	}
	tr.UndoDraw(0, false)
	if len(tr.Nodes[0].Draws) != 1 || len(tr.Nodes[0].Kids) != 1 {
		t.Fatalf("UndoDraw of a repeat: draws %v kids %v", tr.Nodes[0].Draws, tr.Nodes[0].Kids)
	}
	tr.Cands = append(tr.Cands, a)
	tr.FillTarget(Fixed{0.5, 0.25, 0.25}, nil)
	if err := tr.Check(); err == nil {
		t.Error("a tree whose draft row is shorter than its target's V passed Check")
	}
	tr.Reset(3)
	tr.Cands = append(tr.Cands, tr.AddDraw(0, 2))
	tr.FillTarget(Fixed{0.5, 0.25, 0.25}, nil)
	if err := tr.Check(); err != nil || tr.Nodes[1].P.At(2) != 0.25 || tr.Nodes[1].P.Len() != 3 {
		t.Errorf("filled tree: %v, P = %v", err, tr.Nodes[1].P)
	}
}

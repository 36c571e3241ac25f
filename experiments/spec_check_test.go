package experiments

import (
	"strings"
	"testing"
)

// TestSpecCellsCheckedAtLoad (issue 12): a bad axis value fails when the
// spec is parsed, naming the axis and the value, not when its cell runs.
func TestSpecCellsCheckedAtLoad(t *testing.T) {
	t.Parallel()
	head := "experiment = \"verify\"\n[axes]\nalgo = [\"token\"]\n"
	for _, c := range []struct{ axes, want string }{
		{"source = [\"markov:V=4,order=1\"]\nvocab = [4, -3]", "axis vocab: -3"},
		{"source = [\"markov:V=4,order=1\"]\nvocab = [4, 100000]", "V = 100000"},
		{"source = [\"markov:V=4,order=1,a=0\"]", "a = 0"},
		{"source = [\"markov:V=4,a=1e10\"]", "(0, 1e6]"},
		{"source = [\"dirichlet:V=4194304\"]", "--mem-budget"},
		{"source = [\"zipf:V=8\"]\ngamma = [2, 99]", "axis gamma: 99"},
	} {
		_, err := ParseSpec(head + c.axes + "\n")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want an error containing %q", c.axes, err, c.want)
		}
	}
	if _, err := ParseSpec(head + "source = [\"markov:V=4,order=1\"]\nvocab = [4, 8]\n"); err != nil {
		t.Errorf("a good spec: %v", err)
	}
}

package sweep

import (
	"strings"
	"testing"

	"github.com/specsim/specsim/experiments"
)

// FuzzSweepSpec: no spec text makes ParseSpec or Cells panic or expand
// beyond MaxCells; a spec that parses has a non-empty grid. Run with
//
//	go test ./experiments/sweep -run '^$' -fuzz FuzzSweepSpec -fuzztime 30s
func FuzzSweepSpec(f *testing.F) {
	for _, s := range []string{
		"experiment = \"verify\"\n[axes]\nsource = [\"markov:V=4,order=1\"]\nalgo = [\"token\"]\nvocab = [4, -3]\n",
		"experiment = \"verify\"\nseed = 3\n[axes]\nsource = [\"zipf:V=8\", \"markov:V=4\"]\nalgo = [\"token\", \"block\"]\ngamma = [1, 2]\n",
		"experiment = \"verify\"\nzip = [[\"gamma\", \"trials\"]]\n[axes]\nsource = [\"markov:V=4\"]\nalgo = [\"token\"]\ngamma = [1, 2]\ntrials = [10, 20]\n",
		"experiment = \"leviathan-table1\"\n",
		"experiment = \"verify\"\nscale = 1e300\n[axes]\nsource = [\"markov:V=4\"]\nalgo = [\"token\"]\n",
		"experiment = \"verify\"\n[axes]\nsource = [\"markov:V=4\"]\nalgo = [\"token:lenience=2\"]\nparam.lenience = [0.5]\n",
		"",
		"[axes]\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		s, err := ParseSpec(text)
		if err != nil {
			if strings.TrimSpace(err.Error()) == "" {
				t.Fatalf("empty error message for %q", text)
			}
			return
		}
		cells, err := s.Cells(experiments.Config{Seed: 1, Scale: 1})
		if err != nil {
			return
		}
		if len(cells) == 0 || len(cells) > MaxCells {
			t.Fatalf("%d cells from a spec that parsed: %q", len(cells), text)
		}
	})
}

package sweep

import (
	"fmt"
	"strings"
	"testing"

	"github.com/specsim/specsim/experiments"
	"github.com/specsim/specsim/internal/memcap"
)

// FuzzSweepSpec: no spec text makes ParseSpec or Cells panic or expand
// beyond MaxCells, or makes ParseSpec allocate more than memcap's cap; a
// spec that parses has a non-empty grid. Run with
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
		// issue 23: nesting and dotted keys the TOML parser takes quadratic
		// time in, and an axis whose duplicate check was quadratic
		"experiment = \"verify\"\nx = " + strings.Repeat("{a=", 40) + "1" + strings.Repeat("}", 40) + "\n",
		"experiment = \"verify\"\n" + strings.Repeat("a.", 40) + "b = 1\n",
		"[" + strings.Repeat("a.", 40) + "b]\nc = 1\n",
		"experiment = \"verify\"\n[axes]\nsource = [\"markov:V=4\"]\nalgo = [\"token\"]\ngamma = [" + strings.Repeat("1,", 200) + "1]\n",
		"experiment = 'verify' # '\n[axes]\nsource = \"\"\"markov:V=4\"\"\"\nalgo = ['token']\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		var s *Spec
		var err error
		memcap.Cap(t, memcap.DefaultLimit, fmt.Sprintf("ParseSpec(%.60q)", text), func() { s, err = ParseSpec(text) })
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

package external

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/specsim/specsim/algos"
	"github.com/specsim/specsim/data"
	"github.com/specsim/specsim/experiments"
	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/sim/check"
	"github.com/specsim/specsim/sim/draft"
	"github.com/specsim/specsim/sim/run"
	"github.com/specsim/specsim/sim/source"
)

// recordTreeLog logs steps trees of depth 3 with 2 draws per node, drafted
// by the draft kind of tree rule name from a Markov pair over V = 12,
// verified by that rule in process, and returns the log's path.
func recordTreeLog(t *testing.T, name string, steps int64) string {
	t.Helper()
	e, err := algos.LookupTree(name)
	if err != nil {
		t.Fatal(err)
	}
	a, err := e.Build(nil)
	if err != nil {
		t.Fatal(err)
	}
	src, err := source.New("markov:V=12,order=2,seed=4", 3, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	pair, _ := sim.PairOf(src)
	d, err := draft.NewTree(e.Draft, draft.Config{Q: pair.Q, K: 2, Depth: 3})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), name+".parquet")
	err = data.WriteTreeLog(path, data.WriterOptions{Provenance: data.BuildProvenance("external.RecordTrees test", "markov:V=12,order=2,seed=4", 9)},
		func(w *data.TreeWriter) error {
			return RecordTrees(context.Background(), draft.TreeRounds(d, pair.P, nil), run.Tree(a), w, steps, 100, 9, name)
		})
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// TestRecordTrees: a tree log of SpecInfer's own emitted tokens (a
// lossless rule over i.i.d. trees) is valid and its logged run is not
// detected by the every-token PIT test at level 0.001 (it would detect a
// TV of 0.029 per token at power 0.9); the mutant topk-ratio (min(1, p/q)
// recursive rejection over deterministic top-k children, which were not
// drawn from q) is violated.
func TestRecordTrees(t *testing.T) {
	for _, c := range []struct{ rule, want string }{
		{"specinfer", check.NotDetected},
		{"topk-ratio", check.Violated},
	} {
		path := recordTreeLog(t, c.rule, 4000)
		if rep, err := data.Validate(path, 10, 0); err != nil || !rep.Valid || rep.Checked != 4000 {
			t.Fatalf("%s: validate: %v %+v", c.rule, err, rep)
		}
		r, err := data.OpenTree(path, data.ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		rep, err := experiments.ReplayTree(context.Background(), r, experiments.ReplayConfig{Seed: 1})
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %d steps, mean emitted %.3f, first token %s (p = %.3g), every token %s", c.rule, rep.LoggedSteps,
			rep.LoggedMeanEmitted, rep.LoggedLossless.Verdict, rep.LoggedLossless.PValue, rep.LoggedPIT.Claim)
		if rep.LoggedSteps != 4000 || rep.LoggedPIT == nil || rep.LoggedPIT.Verdict != c.want {
			t.Errorf("%s: %d steps, every-token verdict %+v; want 4000, %s", c.rule, rep.LoggedSteps, rep.LoggedPIT, c.want)
		}
	}
}

// TestRecordTreesExternal: RecordTrees logs an implementation in tree
// mode (examples/python/tree_verify.py through the protocol, 3,000 i.i.d.
// trees of depth 3 with 2 draws per node over markov:V=12): SpecInfer's
// log is valid and its logged run not detected by the every-token PIT
// test at level 0.001; bug_bonus_from_parent's (the extra token drawn from
// the parent's target row) is violated.
func TestRecordTreesExternal(t *testing.T) {
	py := numpyPython(t)
	src, err := source.New("markov:V=12,order=2,seed=4", 3, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	pair, _ := sim.PairOf(src)
	for _, c := range []struct{ fn, want string }{{"specinfer", check.NotDetected}, {"bug_bonus_from_parent", check.Violated}} {
		im, err := Start(Config{Command: py + " -m specsim_ext " + filepath.Join(repoRoot(t), "examples", "python", "tree_verify.py") + ":" + c.fn,
			Env: pyEnv(t), Mode: Tree, Gamma: 3, V: 12, Timeout: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		d, err := draft.NewTree(sim.DraftIID, draft.Config{Q: pair.Q, K: 2, Depth: 3})
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), c.fn+".parquet")
		err = data.WriteTreeLog(path, data.WriterOptions{}, func(w *data.TreeWriter) error {
			return RecordTrees(context.Background(), draft.TreeRounds(d, pair.P, nil), run.BatchTree(im), w, 3000, 500, 9, c.fn)
		})
		if cerr := im.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			t.Fatal(err)
		}
		if rep, err := data.Validate(path, 10, 0); err != nil || !rep.Valid {
			t.Fatalf("%s: validate: %v %+v", c.fn, err, rep)
		}
		r, err := data.OpenTree(path, data.ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		rep, err := experiments.ReplayTree(context.Background(), r, experiments.ReplayConfig{Seed: 1})
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %d steps, first token %s (p = %.3g), every token %s (p = %.3g)", c.fn, rep.LoggedSteps,
			rep.LoggedLossless.Verdict, rep.LoggedLossless.PValue, rep.LoggedPIT.Verdict, rep.LoggedPIT.PValue)
		if rep.LoggedSteps != 3000 || rep.LoggedPIT.Verdict != c.want {
			t.Errorf("%s: %d steps, every-token verdict %s; want 3000, %s", c.fn, rep.LoggedSteps, rep.LoggedPIT.Verdict, c.want)
		}
	}
}

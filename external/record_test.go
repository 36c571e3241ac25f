package external

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/specsim/specsim/data"
	"github.com/specsim/specsim/experiments"
	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/sim/check"
	"github.com/specsim/specsim/sim/source"
)

// TestLoggedOutcomes: a log of an implementation's own emitted tokens
// (what an engine that cannot be called from Python records) is judged by
// replay's "logged" block: the correct NumPy verification is not detected
// by the first-token check or the every-token PIT test, the batch-row and
// argmax-candidate bugs are violated by both.
func TestLoggedOutcomes(t *testing.T) {
	py := numpyPython(t)
	for _, c := range []struct {
		fn, mode, want string
	}{
		{"verify", Verify, check.NotDetected},
		{"bug_batch_rows", Verify, "violated"},
		{"bug_topk_candidates", Step, "violated"},
	} {
		src, err := source.New("dirichlet:V=100,contexts=8", 4, 1, 0)
		if err != nil {
			t.Fatal(err)
		}
		srcPool, _ := sim.PoolOf(src.BlockSource)
		im, err := Start(Config{Command: py + " -m specsim_ext " + filepath.Join(repoRoot(t), "examples", "python", "numpy_verify.py") + ":" + c.fn,
			Env: pyEnv(t), Mode: c.mode, Gamma: 4, V: 100, Timeout: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		if err := im.SetPool(srcPool); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), c.fn+".parquet")
		err = data.WriteLog(path, data.WriterOptions{}, func(w *data.Writer) error {
			return Record(context.Background(), srcPool, im, w, 10000, 500, 7, c.fn)
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := im.Close(); err != nil {
			t.Fatal(err)
		}
		r, err := data.Open(path, data.ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		rep, err := experiments.Replay(context.Background(), r, nil, experiments.ReplayConfig{Seed: 1})
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: logged %d steps, mean emitted %.3f, lossless %s (chi2 %.1f, df %d, p = %.3g)", c.fn, rep.LoggedSteps,
			rep.LoggedMeanEmitted, rep.LoggedLossless.Verdict, rep.LoggedLossless.Stat, rep.LoggedLossless.DF, rep.LoggedLossless.PValue)
		if rep.LoggedSteps != 10000 || rep.LoggedLossless.Verdict != c.want {
			t.Errorf("%s: %d logged steps, verdict %s; want 10000, %s", c.fn, rep.LoggedSteps, rep.LoggedLossless.Verdict, c.want)
		}
		if rep.LoggedPIT == nil || rep.LoggedPIT.Verdict != c.want {
			t.Errorf("%s: every-token PIT %+v; want %s", c.fn, rep.LoggedPIT, c.want)
		}
	}
}

package data_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/specsim/specsim/data"
	"github.com/specsim/specsim/experiments"
	"github.com/specsim/specsim/sim/check"
)

// loggerTreeScript drives data/logger/logger.py's tree functions
// (build_tree, verify_tree, make_tree_row, JsonlSink) with a pure-Python
// toy pair over V = 10, whose rows depend on the last two tokens: 5
// prompts of 300 tree steps (2 children per node, depth 2) at temperature
// 0.9 and top-k 8, written as JSON lines. With "bug" the verifier keeps
// the target row after a rejection instead of its residual (the extra
// token then has the wrong law).
const loggerTreeScript = `
import random, sys
sys.path.insert(0, sys.argv[1])
import logger
out, bug = sys.argv[2], sys.argv[3] == "bug"
if bug:
    logger.residual = lambda r, s: r
def model(salt, scale):
    def row(ids):
        g = random.Random(hash((salt,) + tuple(ids[-2:])))
        base = random.Random(hash(tuple(ids[-2:])))
        return [scale * base.gauss(0, 1.5) + (1 - scale) * g.gauss(0, 1.5) for _ in range(10)]
    return row
target, draft = model(1, 1.0), model(2, 0.6)
s = {"temperature": 0.9, "top_k": 8, "top_p": 1.0, "min_p": 0.0}
rng = random.Random(11)
sink = logger.JsonlSink(out, {"writer": "test"})
for pid in range(5):
    ids = [pid, 1]
    for step in range(300):
        nodes = logger.build_tree(ids, draft, target, 2, 2, s, rng.random)
        path, extra = logger.verify_tree(nodes, rng.random)
        row = logger.make_tree_row("toy", pid, step, nodes, path, extra, "toy-target", "toy-draft", s)
        sink.write(row)
        ids = ids + row["emitted_tokens"]
sink.close()
`

// TestLoggerTrees: the Python logger's tree steps (EAGLE-1-style trees,
// recursive rejection sampling without replacement) on a toy pair, written
// as JSON lines, import into a tree log that validate-log accepts, and
// neither replay's first-token check nor its every-token PIT test detects
// the run at level 0.001; with the residual left out after a rejection (a
// biased verifier: the extra token leans to the draft's tokens) the
// logged run is violated (by the first-token ratio check: p = 2e-27 at
// these 1,500 steps). Skipped where python3 is missing.
func TestLoggerTrees(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("logger trees: python3 is not installed; skipped")
	}
	for _, c := range []struct{ mode, want string }{{"correct", check.NotDetected}, {"bug", check.Violated}} {
		dir := t.TempDir()
		jsonl, log := filepath.Join(dir, "run.jsonl"), filepath.Join(dir, "run.parquet")
		cmd := exec.Command(py, "-c", loggerTreeScript, "logger", jsonl, c.mode)
		cmd.Env = append(os.Environ(), "PYTHONHASHSEED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: python: %v\n%s", c.mode, err, out)
		}
		n, err := data.ImportFile(jsonl, log, data.BuildProvenance("logger.py (test)", "toy", 11), 0)
		if err != nil || n != 1500 {
			t.Fatalf("%s: import: %d rows, %v", c.mode, n, err)
		}
		if rep, err := data.Validate(log, 10, 0); err != nil || !rep.Valid {
			t.Fatalf("%s: validate: %v %+v", c.mode, err, rep)
		}
		r, err := data.OpenTree(log, data.ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		rep, err := experiments.ReplayTree(context.Background(), r, experiments.ReplayConfig{Seed: 1})
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %d steps, mean emitted %.3f, first token %s (p = %.3g), every token: %s", c.mode, rep.LoggedSteps,
			rep.LoggedMeanEmitted, rep.LoggedLossless.Verdict, rep.LoggedLossless.PValue, rep.LoggedPIT.Claim)
		got := check.NotDetected
		if rep.LoggedLossless.Verdict == check.Violated || rep.LoggedPIT.Verdict == check.Violated {
			got = check.Violated
		}
		if got != c.want {
			t.Errorf("%s: first token %s, every token %s; want the logged run %s", c.mode, rep.LoggedLossless.Verdict, rep.LoggedPIT.Verdict, c.want)
		}
	}
}

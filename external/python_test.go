package external

import (
	"context"
	"flag"
	"github.com/specsim/specsim/internal/longtest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/specsim/specsim/algos"
	"github.com/specsim/specsim/sim/check"
	"github.com/specsim/specsim/sim/source"
)

var long = flag.Bool("external.long", false, "run every NumPy example at full size, the bf16 bugs included (about a minute)")

var (
	pythonOnce sync.Once
	pythonPath string
	pythonWhy  string
)

// numpyPython returns a Python interpreter that imports numpy: $SPECSIM_PYTHON,
// then /usr/bin/python3 (Debian's python3-numpy installs there), then
// python3 on PATH. It skips the test with a message when there is none.
func numpyPython(t *testing.T) string {
	t.Helper()
	pythonOnce.Do(func() {
		cands := []string{os.Getenv("SPECSIM_PYTHON"), "/usr/bin/python3", "python3"}
		for _, c := range cands {
			if c == "" {
				continue
			}
			if err := exec.Command(c, "-c", "import numpy").Run(); err == nil {
				pythonPath = c
				return
			}
		}
		pythonWhy = "no Python with numpy (tried $SPECSIM_PYTHON, /usr/bin/python3, python3); apt-get install python3-numpy to run the specsim_ext examples"
	})
	if pythonPath == "" {
		t.Skip(pythonWhy)
	}
	return pythonPath
}

// repoRoot is the repository root (this package's parent directory).
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// pyEnv puts the repository's python/ directory on PYTHONPATH.
func pyEnv(t *testing.T) []string {
	return append(os.Environ(), "PYTHONPATH="+filepath.Join(repoRoot(t), "python"))
}

type pyCase struct {
	fn, mode string
	sampling *Sampling
	source   string
	trials   int64
	batch    int
	want     string // check.NotDetected or check.Violated
	edge     string // the expected edge verdict
	note     bool   // the p = q edge case fails, as a note
	long     bool   // only with -external.long
}

// The examples of examples/python/numpy_verify.py. The planted-bug sizes
// come from runs at seed 1: their binned TV is at
// least twice the stated detectable TV at these trial counts, so the
// verdicts do not hinge on the seed.
var pyCases = []pyCase{
	{fn: "verify", mode: Verify, want: check.NotDetected, edge: check.Passed},
	{fn: "step", mode: Step, want: check.NotDetected, edge: check.Passed},
	{fn: "verify_sampled", mode: Verify, sampling: &Sampling{Temperature: 0.8, TopK: 20, TopP: 1}, want: check.NotDetected, edge: check.Passed},
	{fn: "step_sampled", mode: Step, sampling: &Sampling{Temperature: 0.8, TopK: 20, TopP: 0.9, MinP: 0.01}, trials: 10000, want: check.NotDetected, edge: check.Passed},
	{fn: "bug_zero_coin", mode: Verify, want: check.Violated, edge: check.Violated},
	{fn: "bug_zero_coin_step", mode: Step, want: check.Violated, edge: check.Violated},
	{fn: "bug_topk_candidates", mode: Step, want: check.Violated, edge: check.Passed},
	// With p = q and coins 1-2^-53 these reject a draft (p is not
	// transformed, q is), which Leviathan's rule would not; that is a note,
	// not a violation (a lossless rule need not keep it): the statistical
	// tests catch the bug.
	{fn: "bug_params_draft_only", mode: Step, sampling: &Sampling{Temperature: 0.8, TopK: 20, TopP: 1}, want: check.Violated, edge: check.Passed, note: true},
	{fn: "bug_params_draft_only_verify", mode: Verify, sampling: &Sampling{Temperature: 0.8, TopK: 20, TopP: 1}, want: check.Violated, edge: check.Passed, note: true},
	{fn: "bug_batch_rows", mode: Verify, want: check.Violated, edge: check.Passed},
	{fn: "bug_batch_rows_step", mode: Step, want: check.Violated, edge: check.Passed},
	// The batch-row bug needs more than two sequences per batch.
	{fn: "bug_batch_rows", mode: Verify, batch: 2, trials: 4000, want: check.NotDetected, edge: check.Passed},
	{fn: "bug_bf16_verify", mode: Verify, trials: 200000, want: check.Violated, edge: check.Passed, long: true},
	{fn: "bug_bf16_step", mode: Step, trials: 200000, want: check.Violated, edge: check.Passed, long: true},
}

func runPy(t *testing.T, py, file string, c pyCase) (Report, error) {
	t.Helper()
	if c.source == "" {
		c.source = "dirichlet:V=100,contexts=8"
	}
	if c.trials == 0 {
		c.trials = 20000
	}
	if (*long || longtest.Enabled()) && c.trials < 200000 {
		c.trials = 200000
	}
	if c.batch == 0 {
		c.batch = 512
	}
	src, err := source.New(c.source, 4, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	return Run(context.Background(), src, RunConfig{
		Config: Config{Command: py + " -m specsim_ext " + filepath.Join(repoRoot(t), "examples", "python", file) + ":" + c.fn,
			Env: pyEnv(t), Mode: c.mode, Sampling: c.sampling, Timeout: time.Minute},
		Check: check.Config{Gamma: 4, Trials: c.trials, Seed: 1, Batch: c.batch},
	})
}

// TestNumpyExamples: the vectorised NumPy token verification is preserved
// in verify and step mode (with and without sampling parameters), and
// every planted bug is violated; the bf16 bugs need 200,000 steps and run
// with -external.long.
func TestNumpyExamples(t *testing.T) {
	py := numpyPython(t)
	for _, c := range pyCases {
		name := c.fn + "/" + c.mode
		if c.batch != 0 {
			name += "/batch" + strconv.Itoa(c.batch)
		}
		t.Run(name, func(t *testing.T) {
			if c.long && !*long && !longtest.Enabled() {
				t.Skip("needs 200,000 steps; run with -external.long")
			}
			t.Parallel()
			rep, err := runPy(t, py, "numpy_verify.py", c)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%-30s %-6s batch %4d: %-12s (edge %s, invalid %d) p_holm %.3g, detects %s TV >= %.4f, %.0f steps/s",
				c.fn, c.mode, rep.Batch, rep.Verdict, rep.Edge, rep.Invalid, rep.PValue, rep.MinDetectableQuantity, rep.MinDetectableTV, rep.StepsPerSecond)
			if rep.Verdict != c.want || rep.Edge != c.edge {
				t.Errorf("verdict %s, edge %s (%s); want %s, edge %s", rep.Verdict, rep.Edge, rep.EdgeMsg, c.want, c.edge)
			}
			if hasNote := len(rep.Notes) > 0 && strings.Contains(rep.Notes[0], "Leviathan's rule keeps it"); hasNote != c.note {
				t.Errorf("notes %q; want the p = q note: %v", rep.Notes, c.note)
			}
		})
	}
}

// TestNumpyMisbehaviour: a Python implementation that raises, dies,
// hangs or lies gets one error line naming the batch.
func TestNumpyMisbehaviour(t *testing.T) {
	py := numpyPython(t)
	for _, c := range []struct {
		fn, want string
	}{
		{"boom", "ValueError: planted failure (numpy_verify.py:"},
		{"crash", "exited (exit status 137)"},
		{"hang", "no answer within the timeout"},
		{"lie_padding", "follows -1 padding"},
		{"lie_shape", "emitted has shape [512 4], want [512 5]"},
		{"lie_dtype", "emitted has dtype <f4"},
	} {
		src, _ := source.New("dirichlet:V=20,contexts=2", 4, 1, 0)
		_, err := Run(context.Background(), src, RunConfig{
			Config: Config{Command: py + " -m specsim_ext " + filepath.Join(repoRoot(t), "examples", "python", "numpy_verify.py") + ":" + c.fn,
				Env: pyEnv(t), Mode: Verify, Timeout: 3 * time.Second},
			Check: check.Config{Gamma: 4, Trials: 1000, Seed: 1, Batch: 512},
		})
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "batch 0 (steps 0..511)") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error %v; want one line naming batch 0 and containing %q", c.fn, err, c.want)
		}
	}
}

// TestTorchExample runs the PyTorch variant where torch is importable: its
// coins come from batch.uniforms on its device, so the edge cases test it
// (the inclusive comparison is violated).
func TestTorchExample(t *testing.T) {
	t.Parallel() // its own temporary directory and binaries; minute-long timeouts
	py := numpyPython(t)
	if err := exec.Command(py, "-c", "import torch").Run(); err != nil {
		t.Skip("torch is not importable by " + py + " (apt-get install python3-torch to run the PyTorch example)")
	}
	for _, c := range []pyCase{
		{fn: "verify", mode: Verify, want: check.NotDetected, edge: check.Passed},
		{fn: "bug_inclusive", mode: Verify, want: check.Violated, edge: check.Violated},
	} {
		rep, err := runPy(t, py, "torch_verify.py", c)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Verdict != c.want || rep.Edge != c.edge {
			t.Errorf("torch %s: %s, edge %s (%s); want %s, edge %s", c.fn, rep.Verdict, rep.Edge, rep.EdgeMsg, c.want, c.edge)
		}
	}
}

// TestTorchCUDA runs the PyTorch example on CUDA tensors through the
// protocol (batch.uniforms on the device) and logs its verdict and steps
// per second; it skips, saying why, where torch sees no CUDA device.
func TestTorchCUDA(t *testing.T) {
	py := numpyPython(t)
	if err := exec.Command(py, "-c", "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)").Run(); err != nil {
		t.Skip("no CUDA device visible to torch in " + py + " (the test runs the PyTorch example on CUDA tensors where there is one)")
	}
	rep, err := runPy(t, py, "torch_verify.py", pyCase{fn: "verify_cuda", mode: Verify, trials: 200000, batch: 4096})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("torch on CUDA: %s (p_holm %.3g), edge cases %s, %.0f steps/s", rep.Verdict, rep.PValue, rep.Edge, rep.StepsPerSecond)
	if rep.Verdict != check.NotDetected || rep.Edge != check.Passed {
		t.Errorf("torch on CUDA: %s, edge %s (%s); want not_detected, edge passed", rep.Verdict, rep.Edge, rep.EdgeMsg)
	}
}

// TestSpecsimExtCheck runs examples/python/test_numpy_verify.py, the
// pytest-style use of specsim_ext.check, against a freshly built harness.
func TestSpecsimExtCheck(t *testing.T) {
	t.Parallel() // its own temporary directory and binaries; minute-long timeouts
	py := numpyPython(t)
	bin := filepath.Join(t.TempDir(), "simulate")
	build := exec.Command("go", "build", "-o", bin, "./cmd/simulate")
	build.Dir = repoRoot(t)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/simulate: %v\n%s", err, out)
	}
	cmd := exec.Command(py, "test_numpy_verify.py")
	cmd.Dir = filepath.Join(repoRoot(t), "examples", "python")
	cmd.Env = append(pyEnv(t), "SPECSIM_SIMULATE="+bin)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("test_numpy_verify.py: %v\n%s", err, out)
	}
	for _, name := range []string{"test_verify_is_lossless", "test_step_is_lossless", "test_batch_row_bug_is_caught", "test_conforms_to_token", "test_changed_tokens_are_violated", "test_malformed_is_an_error"} {
		if !strings.Contains(string(out), "ok "+name) {
			t.Errorf("%s did not pass:\n%s", name, out)
		}
	}
}

// TestProtocol1Client: specsim_ext as it was when the harness spoke
// protocol 1 only (testdata/protocol1, unchanged) still gets its verdicts
// from a harness that speaks protocol 2, in verify and step mode; what
// needs protocol 2 (tree mode) is refused with one line saying so.
func TestProtocol1Client(t *testing.T) {
	t.Parallel() // its own temporary directory and binaries; minute-long timeouts
	py := numpyPython(t)
	old := append(os.Environ(), "PYTHONPATH="+filepath.Join(repoRoot(t), "external", "testdata", "protocol1"))
	ex := filepath.Join(repoRoot(t), "examples", "python", "numpy_verify.py")
	for _, c := range []struct{ fn, mode, want string }{
		{"verify", Verify, check.NotDetected}, {"step", Step, check.NotDetected}, {"bug_batch_rows", Verify, check.Violated},
	} {
		src, _ := source.New("dirichlet:V=100,contexts=8", 4, 1, 0)
		rep, err := Run(context.Background(), src, RunConfig{
			Config: Config{Command: py + " -m specsim_ext " + ex + ":" + c.fn, Env: old, Mode: c.mode, Timeout: time.Minute},
			Check:  check.Config{Gamma: 4, Trials: 20000, Seed: 1, Batch: 512},
		})
		if err != nil {
			t.Fatalf("%s: %v", c.fn, err)
		}
		if rep.Protocol != 1 || rep.Verdict != c.want {
			t.Errorf("%s (%s mode): protocol %d, verdict %s; want protocol 1, %s", c.fn, c.mode, rep.Protocol, rep.Verdict, c.want)
		}
	}
	src, _ := source.New("markov:V=6,order=1", 3, 1, 0)
	_, err := Run(context.Background(), src, RunConfig{
		Config: Config{Command: py + " -m specsim_ext " + ex + ":verify", Env: old, Mode: Tree, Timeout: time.Minute},
		Check:  check.Config{Gamma: 3, Trials: 1000, Seed: 1, Batch: 100},
	})
	if err == nil || !strings.Contains(err.Error(), "speaks protocol 1, and tree mode needs protocol 2") || strings.Contains(err.Error(), "\n") {
		t.Errorf("tree mode with a protocol 1 client: %v", err)
	}
}

// shapeCase is one example of a new shape (tree, step with the model
// shipped, verify with a rule other than Leviathan's).
type shapeCase struct {
	file, fn, mode, source, draft, conform string
	k, gamma                               int
	want                                   string
	invalid                                bool // the outcomes component must be violated
}

// The sizes: 20,000 steps in batches of 500 on markov:V=6 (every node its
// own rows) or a 100-token pool; each planted bug here has p_holm below
// 1e-30 at seed 1, and each correct version p_holm above 0.05, so the
// verdicts do not hinge on the seed.
var shapeCases = []shapeCase{
	// Tree mode: SpecInfer on i.i.d. trees, its three bugs, the membership
	// rule on top-k (Medusa) and dynamic (EAGLE-2) trees, SpecInfer on
	// top-k trees (the ratio rule on deterministic children), a path
	// outside the tree.
	{file: "tree_verify.py", fn: "specinfer", mode: Tree, draft: "iid", want: check.NotDetected},
	{file: "tree_verify.py", fn: "specinfer", mode: Tree, draft: "iid", conform: "specinfer", want: check.NotDetected},
	{file: "tree_verify.py", fn: "specinfer", mode: Tree, draft: "iid", source: "dirichlet:V=100,contexts=8", want: check.NotDetected},
	{file: "tree_verify.py", fn: "bug_wrong_row", mode: Tree, draft: "iid", want: check.Violated},
	{file: "tree_verify.py", fn: "bug_sibling_order", mode: Tree, draft: "iid", want: check.Violated},
	{file: "tree_verify.py", fn: "bug_sibling_order", mode: Tree, draft: "iid", conform: "specinfer", want: check.Violated},
	{file: "tree_verify.py", fn: "bug_bonus_from_parent", mode: Tree, draft: "iid", want: check.Violated},
	{file: "tree_verify.py", fn: "target_only", mode: Tree, draft: "topk", want: check.NotDetected},
	{file: "tree_verify.py", fn: "target_only", mode: Tree, draft: "dynamic", conform: "target-only", want: check.NotDetected},
	{file: "tree_verify.py", fn: "specinfer", mode: Tree, draft: "topk", want: check.Violated},
	{file: "tree_verify.py", fn: "lie_path", mode: Tree, draft: "iid", want: check.Violated, invalid: true},
	// Step mode with the model shipped: a sampler that does not expose its
	// drafts, a beam sampler, a point-mass n-gram verifier; on a pair and
	// on a pool.
	{file: "step_samplers.py", fn: "no_drafts", mode: Step, want: check.NotDetected},
	{file: "step_samplers.py", fn: "no_drafts", mode: Step, source: "dirichlet:V=100,contexts=8", want: check.NotDetected},
	{file: "step_samplers.py", fn: "bug_no_drafts_residual", mode: Step, want: check.Violated},
	{file: "step_samplers.py", fn: "beam", mode: Step, want: check.NotDetected},
	{file: "step_samplers.py", fn: "beam", mode: Step, source: "dirichlet:V=100,contexts=8", want: check.NotDetected},
	{file: "step_samplers.py", fn: "bug_beam_q_ratio", mode: Step, want: check.Violated},
	{file: "step_samplers.py", fn: "ngram_step", mode: Step, want: check.NotDetected},
	{file: "step_samplers.py", fn: "bug_ngram_keep_x", mode: Step, want: check.Violated},
	// The point-mass rule verifying the harness's drafts: lossless, never
	// violated by any component.
	{file: "step_samplers.py", fn: "ngram_verify", mode: Verify, want: check.NotDetected},
	{file: "step_samplers.py", fn: "ngram_verify", mode: Verify, source: "dirichlet:V=100,contexts=8", want: check.NotDetected},
}

func runShape(t *testing.T, py string, c shapeCase, trials int64) (Report, error) {
	t.Helper()
	if c.source == "" {
		c.source = "markov:V=6,order=1"
	}
	g := 3
	if strings.HasPrefix(c.source, "dirichlet") {
		g = 4
	}
	src, err := source.New(c.source, g, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	return Run(context.Background(), src, RunConfig{
		Config: Config{Command: py + " -m specsim_ext " + filepath.Join(repoRoot(t), "examples", "python", c.file) + ":" + c.fn,
			Env: pyEnv(t), Mode: c.mode, Timeout: time.Minute},
		Check:   check.Config{Gamma: g, Trials: trials, Seed: 1, Batch: 500},
		Conform: c.conform, TreeDraft: c.draft, K: 3,
	})
}

// TestShapeExamples: the tree verifiers, step-mode samplers and the
// point-mass rule of examples/python get their verdicts; every component
// of a correct one's verdict is preserved (a point-mass verifier's
// failure of Leviathan's p = q edge case is a note).
func TestShapeExamples(t *testing.T) {
	py := numpyPython(t)
	trials := int64(20000)
	if *long || longtest.Enabled() {
		trials = 200000
	}
	for _, c := range shapeCases {
		name := c.fn + "/" + c.mode + "/" + c.draft + "/" + c.conform + "/" + c.source
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			rep, err := runShape(t, py, c, trials)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%-22s %-6s %-8s: %-9s p_holm %.3g, invalid %d, components %+v, notes %q", c.fn, c.mode, c.draft, rep.Verdict, rep.PValue, rep.Invalid, rep.Components, rep.Notes)
			if rep.Verdict != c.want {
				t.Errorf("verdict %s (p_holm %.3g, edge %s %s, invalid %d); want %s", rep.Verdict, rep.PValue, rep.Edge, rep.EdgeMsg, rep.Invalid, c.want)
			}
			if c.want == check.NotDetected && (rep.Edge == check.Violated || rep.Invalid > 0 || len(rep.Components) > 0) {
				t.Errorf("a correct sampler: edge %s, invalid %d, components %+v", rep.Edge, rep.Invalid, rep.Components)
			}
			if got := len(rep.Components) == 1 && rep.Components[0].Name == "outcomes"; got != c.invalid {
				t.Errorf("components %+v; want the outcomes component: %v", rep.Components, c.invalid)
			}
			if rep.Protocol != 2 {
				t.Errorf("protocol %d, want 2", rep.Protocol)
			}
		})
	}
}

// batchCase is one run of examples/python/batch_samplers.py.
type batchCase struct {
	fn, mode, rows, source string
	batch                  int
	want                   string
	determinism            string // the determinism component's verdict ("" for none)
	invalid                bool
	testsPass              bool // the statistical tests alone find nothing
}

// TestBatchExamples: batches composed like a serving engine's (--rows):
// the engine-style sampler is preserved and deterministic in its seeded
// rows; the mixed-seeding bug is caught by the per-row law tests in mixed
// batches only, the shared-stream bug by the determinism component only,
// greedy rows that sample by the invalid outcomes. Each case has p_holm
// below 1e-30 or above 0.3 at seed 1 where the tests decide.
func TestBatchExamples(t *testing.T) {
	py := numpyPython(t)
	unseeded := "greedy;t=0.7,top_k=50;t=1,gamma=2"
	for _, c := range []batchCase{
		{fn: "engine", mode: Verify, rows: "engine", want: check.NotDetected, determinism: check.NotDetected},
		{fn: "engine_step", mode: Step, rows: "engine", want: check.NotDetected, determinism: check.NotDetected},
		{fn: "engine", mode: Verify, rows: unseeded, want: check.NotDetected},
		{fn: "bug_mixed_seeding", mode: Verify, rows: "engine", want: check.Violated, determinism: check.NotDetected},
		{fn: "bug_mixed_seeding", mode: Verify, rows: unseeded, want: check.NotDetected},
		{fn: "bug_seeded_stream", mode: Verify, rows: "engine", want: check.Violated, determinism: check.Violated, testsPass: true},
		{fn: "bug_greedy_sampled", mode: Verify, rows: "engine", want: check.Violated, determinism: check.NotDetected, invalid: true},
	} {
		t.Run(c.fn+"/"+c.mode+"/"+c.rows, func(t *testing.T) {
			t.Parallel()
			rep := runBatch(t, py, c, 20000)
			comp := map[string]check.Component{}
			for _, x := range rep.Components {
				comp[x.Name] = x
			}
			t.Logf("%s: %s, p_holm %.3g, invalid %d, components %+v", c.fn, rep.Verdict, rep.PValue, rep.Invalid, rep.Components)
			if rep.Verdict != c.want || (rep.Invalid > 0) != c.invalid || comp["determinism"].Verdict != c.determinism {
				t.Errorf("verdict %s, invalid %d, determinism %q; want %s, invalid %v, determinism %q", rep.Verdict, rep.Invalid, comp["determinism"].Verdict, c.want, c.invalid, c.determinism)
			}
			if c.testsPass && rep.PValue < 0.01 {
				t.Errorf("p_holm %.3g: the statistical tests should not see this bug (it is the determinism component's)", rep.PValue)
			}
		})
	}
}

func runBatch(t *testing.T, py string, c batchCase, trials int64) Report {
	t.Helper()
	if c.source == "" {
		c.source = "dirichlet:V=100,contexts=8"
	}
	if c.batch == 0 {
		c.batch = 500
	}
	src, err := source.New(c.source, 4, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	var rows []RowConfig
	if c.rows != "" {
		if rows, err = ParseRows(c.rows); err != nil {
			t.Fatal(err)
		}
	}
	rep, err := Run(context.Background(), src, RunConfig{
		Config: Config{Command: py + " -m specsim_ext " + filepath.Join(repoRoot(t), "examples", "python", "batch_samplers.py") + ":" + c.fn,
			Env: pyEnv(t), Mode: c.mode, Timeout: time.Minute, Rows: rows},
		Check: check.Config{Gamma: 4, Trials: trials, Seed: 1, Batch: c.batch},
	})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// TestSharedUniforms: a batched sampler whose rows share their uniforms
// keeps every row's law exact, so the per-row law tests cannot see it
// where each batch holds each context at most once (--batch 16 over 1,024
// contexts); the test that rows of a batch are independent, which Run
// always adds, calls it violated there and at --batch 1024 over 16
// contexts.
func TestSharedUniforms(t *testing.T) {
	py := numpyPython(t)
	for _, c := range []batchCase{
		{fn: "bug_shared_uniforms", mode: Verify, source: "dirichlet:V=100,contexts=1024", batch: 16},
		{fn: "bug_shared_uniforms", mode: Verify, source: "dirichlet:V=100,contexts=16", batch: 1024},
	} {
		rep := runBatch(t, py, c, 20480)
		var rows *check.Test // the rows test that rejects most strongly
		for i, x := range rep.Tests {
			if strings.HasPrefix(x.Name, "rows ") && (rows == nil || x.PHolm < rows.PHolm) {
				rows = &rep.Tests[i]
			}
		}
		if rows == nil {
			t.Fatalf("%s, batch %d: no rows-of-a-batch test among %d tests", c.source, c.batch, len(rep.Tests))
		}
		t.Logf("%s at batch %d: %s, p_holm %.3g; %s: p_holm %.3g", c.source, c.batch, rep.Verdict, rep.PValue, rows.Name, rows.PHolm)
		if rep.Verdict != check.Violated || !(rows.PHolm < 0.01) {
			t.Errorf("%s, batch %d: verdict %s, rows test p_holm %.3g; the cross-row test must flag uniforms shared across rows", c.source, c.batch, rep.Verdict, rows.PHolm)
		}
		if r := rep.Resembles; len(r) == 0 || r[0].Bug != rowsBug(t).Name || r[0].LogLikGap != nil || !strings.HasPrefix(r[0].Test, "rows ") {
			t.Errorf("%s, batch %d: resembles %+v; want %q first, with a rows test and no log-likelihood gap", c.source, c.batch, r, rowsBug(t).Name)
		}
	}
}

// rowsBug is the catalogue's bug shown by the rows-of-a-batch tests.
func rowsBug(t *testing.T) algos.Bug {
	t.Helper()
	for _, b := range algos.Bugs() {
		if b.Evidence == algos.ByRows {
			return b
		}
	}
	t.Fatal("the bug catalogue has no bug shown by the rows tests")
	return algos.Bug{}
}

// TestNumpyResembles: the NumPy verifier with the inclusive comparison,
// in verify mode (bug_zero_coin) checked for conformance to token
// verification and for losslessness, and in step mode
// (bug_zero_coin_step) for conformance, is violated by the edge case that
// the harness runs after the tests, and resembles names the catalogue's
// inclusive comparison (the bug of mutant-zero-coin) first, at 4,096 trials
// (the edge case decides; the fits need at least 64 steps).
func TestNumpyResembles(t *testing.T) {
	py := numpyPython(t)
	t.Parallel()
	var want algos.Bug
	for _, b := range algos.Bugs() {
		if b.Mutant == "mutant-zero-coin" {
			want = b
		}
	}
	for _, c := range []struct{ fn, mode, conform string }{
		{"bug_zero_coin", Verify, "token"}, {"bug_zero_coin", Verify, ""}, {"bug_zero_coin_step", Step, "token"},
	} {
		src, err := source.New("dirichlet:V=100,contexts=8", 4, 1, 0)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := Run(context.Background(), src, RunConfig{Conform: c.conform,
			Config: Config{Command: py + " -m specsim_ext " + filepath.Join(repoRoot(t), "examples", "python", "numpy_verify.py") + ":" + c.fn,
				Env: pyEnv(t), Mode: c.mode, Timeout: time.Minute},
			Check: check.Config{Gamma: 4, Trials: 4096, Seed: 1, Batch: 512}})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s, conform %q: %s (edge %s), %d resembles, %d fits", c.fn, c.conform, rep.Verdict, rep.Edge, len(rep.Resembles), len(rep.Fits))
		if rep.Verdict != check.Violated || len(rep.Fits) == 0 || len(rep.Resembles) == 0 || rep.Resembles[0].Bug != want.Name {
			t.Errorf("%s, conform %q: verdict %s, %d fits, resembles %+v; want violated, fits, %q first", c.fn, c.conform, rep.Verdict, len(rep.Fits), rep.Resembles, want.Name)
		}
	}
}

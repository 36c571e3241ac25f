package external

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/specsim/specsim/sim/check"
)

// TestCoinsFromTheBatch: the scripted-coin edge cases test a sampler only
// when it takes its coins from the batch (examples/python/coin_samplers.py).
// The inclusive comparison u·q <= p drawing from a generator of its own
// (seeded from rng.integers) cannot be seen by any test: its edge cases
// are not_exercised, and the claim says how to let them be; drawing from
// batch.uniforms, the coin of exactly 0 accepts a draft of p = 0:
// violated. The correct sampler is not_detected either way, its edge
// cases passed only from the batch's coins. 20,000 steps at seed 1, as
// TestNumpyExamples; the edge verdicts do not depend on the steps (16
// identical rows of a sampler with its own coins agree by chance with
// probability at most 2^-15).
func TestCoinsFromTheBatch(t *testing.T) {
	py := numpyPython(t)
	for _, c := range []pyCase{
		{fn: "correct_batch_coins", mode: Verify, want: check.NotDetected, edge: check.Passed},
		{fn: "correct_own_generator", mode: Verify, want: check.NotDetected, edge: check.NotExercised},
		{fn: "inclusive_batch_coins", mode: Verify, want: check.Violated, edge: check.Violated},
		{fn: "inclusive_own_generator", mode: Verify, want: check.NotDetected, edge: check.NotExercised},
	} {
		t.Run(c.fn, func(t *testing.T) {
			t.Parallel()
			rep, err := runPy(t, py, "coin_samplers.py", c)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: verdict %s, edge %s: %s; claim: %s", c.fn, rep.Verdict, rep.Edge, rep.EdgeMsg, rep.Claim)
			if rep.Verdict != c.want || rep.Edge != c.edge {
				t.Errorf("verdict %s, edge %s (%s); want %s, edge %s", rep.Verdict, rep.Edge, rep.EdgeMsg, c.want, c.edge)
			}
			exercised := !strings.Contains(rep.Claim, "component edge cases not exercised: the scripted coins were not used")
			if exercised != (c.edge != check.NotExercised) {
				t.Errorf("claim %q; want it to say the edge cases were not exercised: %v", rep.Claim, !exercised)
			}
			if !exercised && (!strings.Contains(rep.EdgeMsg, "16 identical rows gave") || !strings.Contains(rep.EdgeMsg, "take every coin from batch.uniforms")) {
				t.Errorf("edge message %q; want the rows that disagreed and the fix", rep.EdgeMsg)
			}
		})
	}
}

// TestContractBreach: a lossless beam (tree) sampler that returns its best
// beam as drafts, though its accepted tokens leave it, is reported as the
// contract component (how many steps, the first, the fix) with verdict
// contract_breach, and no test of its emitted law rejects; the same
// sampler returning emitted alone is not_detected with no component. The
// step form of protocol 1 (p_logits, q_logits, rng) returning (None,
// emitted) or emitted alone is judged, not refused.
func TestContractBreach(t *testing.T) {
	py := numpyPython(t)
	for _, c := range []shapeCase{
		{file: "step_samplers.py", fn: "beam_path_as_drafts", mode: Step, want: check.ContractBreach},
		{file: "step_samplers.py", fn: "beam", mode: Step, want: check.NotDetected},
		{file: "step_samplers.py", fn: "hidden_drafts", mode: Step, source: "dirichlet:V=100,contexts=8", want: check.NotDetected},
		{file: "step_samplers.py", fn: "emitted_only", mode: Step, source: "dirichlet:V=100,contexts=8", want: check.NotDetected},
	} {
		t.Run(c.fn, func(t *testing.T) {
			t.Parallel()
			rep, err := runShape(t, py, c, 20000)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: verdict %s, p_holm %.3g, components %+v; claim: %s", c.fn, rep.Verdict, rep.PValue, rep.Components, rep.Claim)
			if rep.Verdict != c.want || rep.PValue < rep.Level || rep.Invalid != 0 {
				t.Errorf("verdict %s (p_holm %.3g, invalid %d); want %s with no test rejecting", rep.Verdict, rep.PValue, rep.Invalid, c.want)
			}
			breach := c.want == check.ContractBreach
			if got := len(rep.Components) == 1 && rep.Components[0].Name == "contract" && rep.Components[0].Verdict == check.ContractBreach; got != breach {
				t.Fatalf("components %+v; want the contract component: %v", rep.Components, breach)
			}
			if breach {
				d := rep.Components[0].Detail
				for _, want := range []string{"steps emitted accepted tokens that are not the drafts the sampler returned", "(the first: batch 0", "a tree or beam sampler returns emitted alone"} {
					if !strings.Contains(d, want) {
						t.Errorf("contract detail %q lacks %q", d, want)
					}
				}
				if !strings.HasPrefix(rep.Claim, "contract breach, not a deviation of the law: no test of the target law rejected") || strings.Contains(rep.Claim, "violated") {
					t.Errorf("claim %q", rep.Claim)
				}
			}
		})
	}
}

// uniformsScript checks Batch.uniforms' numbers exactly: scripted batches
// give exactly 0 or the dtype's largest value below 1; a seeded row's
// coins continue PCG64(seed), shared with row_rng; the others come from
// the batch's generator; a torch tensor on a device (where torch is
// importable) holds the same numbers.
const uniformsScript = `
import numpy as np
from specsim_ext._batch import Batch
from specsim_ext._server import ScriptedGenerator
for top in (False, True):
    b = Batch(size=3, gamma=2, rng=ScriptedGenerator(top, 7), coins="max" if top else "zero", seeds=np.array([-1, 5, -1]))
    for dt in (np.float64, np.float32):
        u = b.uniforms(2, 4, dtype=dt.__name__)
        want = np.nextafter(dt(1), dt(0)) if top else dt(0)
        assert u.shape == (3, 2, 4) and u.dtype == dt and (u == want).all(), (top, dt, u)
b = Batch(size=3, gamma=2, rng=np.random.Generator(np.random.PCG64(11)), seeds=np.array([-1, 5, -1]))
u = np.concatenate([b.uniforms(2), b.uniforms()[:, None], b.row_rng(1).random(1)[None, :].repeat(3, 0)], axis=1)
ref = np.random.Generator(np.random.PCG64(11))
r1, r2 = ref.random((3, 2)), ref.random(3)
s = np.random.Generator(np.random.PCG64(5)).random(4)
assert (u[[0, 2], :2] == r1[[0, 2]]).all() and (u[[0, 2], 2] == r2[[0, 2]]).all(), u
assert (u[1] == s).all(), (u[1], s)
try:
    import torch
except ImportError:
    print("ok numpy")
else:
    b = Batch(size=2, gamma=1, rng=ScriptedGenerator(True, 0), coins="max")
    t = b.uniforms(3, device="cpu", dtype=torch.float32)
    assert t.dtype == torch.float32 and (t == float(np.nextafter(np.float32(1), np.float32(0)))).all()
    print("ok numpy torch")
`

// TestBatchUniforms runs uniformsScript.
func TestBatchUniforms(t *testing.T) {
	py := numpyPython(t)
	cmd := exec.Command(py, "-c", uniformsScript)
	cmd.Env = pyEnv(t)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "ok numpy") {
		t.Fatalf("%v\n%s", err, out)
	}
	t.Logf("%s", out)
}

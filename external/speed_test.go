package external

import (
	"context"
	"flag"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/specsim/specsim/sim/check"
	"github.com/specsim/specsim/sim/source"
)

var speed = flag.Bool("external.speed", false, "run TestProtocolSpeed: the NumPy example at V=1000, γ=4, B=1024 through the harness against a plain Python loop (about a minute); pin with taskset -c 0 for one core")

// cpuSeconds returns the user+system CPU time of this process and of its
// waited-for children.
func cpuSeconds() float64 {
	var self, kids syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	syscall.Getrusage(syscall.RUSAGE_CHILDREN, &kids)
	tv := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	return tv(self.Utime) + tv(self.Stime) + tv(kids.Utime) + tv(kids.Stime)
}

// TestProtocolSpeed measures the protocol's overhead as the issue states
// it: the harness must check at least 20,000 steps/s and at least 50% of
// what the same NumPy function achieves in a plain Python loop over
// batches of the same shape. Both figures are taken by CPU time (Go and
// Python together; the machine may be shared) and by wall clock.
func TestProtocolSpeed(t *testing.T) {
	if !*speed {
		t.Skip("run with -external.speed")
	}
	py := numpyPython(t)
	out, err := exec.Command(py, filepath.Join(repoRoot(t), "examples", "python", "bench_loop.py"), "1000", "4", "1024", "200").CombinedOutput()
	if err != nil {
		t.Fatalf("bench_loop.py: %v\n%s", err, out)
	}
	m := regexp.MustCompile(`([0-9]+) steps/s wall, ([0-9]+) steps/s CPU`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("bench_loop.py printed %q", out)
	}
	loopWall, _ := strconv.ParseFloat(string(m[1]), 64)
	loopCPU, _ := strconv.ParseFloat(string(m[2]), 64)
	src, err := source.New("dirichlet:V=1000", 4, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	const trials = 204800
	c1 := cpuSeconds()
	start := time.Now()
	rep, err := Run(context.Background(), src, RunConfig{
		Config: Config{Command: py + " -m specsim_ext " + filepath.Join(repoRoot(t), "examples", "python", "numpy_verify.py") + ":verify",
			Env: pyEnv(t), Mode: Verify, Timeout: time.Minute},
		Check: check.Config{Gamma: 4, Trials: trials, Seed: 1, Batch: 1024},
	})
	wall := time.Since(start).Seconds()
	cpu := cpuSeconds() - c1
	if err != nil {
		t.Fatal(err)
	}
	hCPU := trials / cpu
	t.Logf("harness: %s, %.0f steps/s wall in the check (%.0f with start-up), %.0f steps/s CPU with start-up", rep.Verdict, rep.StepsPerSecond, trials/wall, hCPU)
	t.Logf("plain loop: %.0f steps/s wall, %.0f steps/s CPU; harness/loop: %.2f wall, %.2f CPU", loopWall, loopCPU, rep.StepsPerSecond/loopWall, hCPU/loopCPU)
	if hCPU < 20000 {
		t.Errorf("harness %.0f steps/s of CPU; want >= 20,000", hCPU)
	}
	if hCPU < 0.5*loopCPU {
		t.Errorf("harness %.0f steps/s of CPU is below half the plain loop's %.0f", hCPU, loopCPU)
	}
}

// TestTreeSpeed measures tree mode's overhead as issue 21 states it: tree
// verification at V = 1,000, k = 4 i.i.d. chains, depth 4, through the
// NumPy example (tree_verify.py:specinfer) in batches of 1,024 trees, must
// run at no less than half the speed of the same function called in a
// plain Python loop on the same batches (a first run saves them with
// SPECSIM_EXT_SAVE; examples/python/bench_tree.py loops over them). Both
// are taken by CPU time (Go and Python together; the machine may be
// shared) and by wall clock; the test asserts the CPU ratio.
func TestTreeSpeed(t *testing.T) {
	if !*speed {
		t.Skip("run with -external.speed")
	}
	py := numpyPython(t)
	src, err := source.New("dirichlet:V=1000,contexts=16", 4, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	cmd := py + " -m specsim_ext " + filepath.Join(repoRoot(t), "examples", "python", "tree_verify.py") + ":specinfer"
	run := func(env []string, trials int64) (Report, error) {
		return Run(context.Background(), src, RunConfig{
			Config: Config{Command: cmd, Env: env, Mode: Tree, Timeout: time.Minute},
			Check:  check.Config{Gamma: 4, Trials: trials, Seed: 1, Batch: 1024}, TreeDraft: "iid", K: 4,
		})
	}
	saved := t.TempDir()
	if _, err := run(append(pyEnv(t), "SPECSIM_EXT_SAVE="+saved, "SPECSIM_EXT_SAVE_BATCHES=8"), 8*1024); err != nil {
		t.Fatal(err)
	}
	bench := exec.Command(py, filepath.Join(repoRoot(t), "examples", "python", "bench_tree.py"), saved, "specinfer", "10")
	bench.Env = pyEnv(t)
	out, err := bench.CombinedOutput()
	if err != nil {
		t.Fatalf("bench_tree.py: %v\n%s", err, out)
	}
	m := regexp.MustCompile(`([0-9]+) steps/s wall, ([0-9]+) steps/s CPU`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("bench_tree.py printed %q", out)
	}
	loopWall, _ := strconv.ParseFloat(string(m[1]), 64)
	loopCPU, _ := strconv.ParseFloat(string(m[2]), 64)
	const trials = 80 * 1024
	c1 := cpuSeconds()
	start := time.Now()
	rep, err := run(pyEnv(t), trials)
	wall := time.Since(start).Seconds()
	cpu := cpuSeconds() - c1
	if err != nil {
		t.Fatal(err)
	}
	hCPU := trials / cpu
	t.Logf("harness: %s, %.0f steps/s wall in the check (%.0f with start-up), %.0f steps/s CPU with start-up", rep.Verdict, rep.StepsPerSecond, trials/wall, hCPU)
	t.Logf("plain loop: %.0f steps/s wall, %.0f steps/s CPU; harness/loop: %.2f wall, %.2f CPU", loopWall, loopCPU, rep.StepsPerSecond/loopWall, hCPU/loopCPU)
	if hCPU < 0.5*loopCPU {
		t.Errorf("harness %.0f steps/s of CPU is below half the plain loop's %.0f", hCPU, loopCPU)
	}
}

package external

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestWheel builds the specsim-ext wheel offline from this checkout
// (python3 -m pip wheel --no-index --no-build-isolation --no-deps
// ./python, which runs go build ./cmd/simulate), installs it into a fresh
// virtual environment and, with no Go, no PYTHONPATH, no SPECSIM_SIMULATE
// and no other simulate on PATH, runs the environment's simulate
// --version and examples/python/test_pytest_plugin.py (copied out of the
// checkout) with pytest: the fixture finds the wheel's binary, passes a
// lossless sampler and fails a buggy one with the check's own message;
// SPECSIM_SIMULATE still overrides the installed binary.
// Built with no Go on PATH, the wheel fails with one line saying so. The
// wheel must be a platform wheel, and the binary must carry this
// checkout's revision when the checkout is a clone (a linked worktree is
// not stamped; gitrev says why). It skips without venv, pip, setuptools,
// wheel or pytest (apt-get install python3-venv python3-pip
// python3-setuptools python3-wheel python3-pytest).
func TestWheel(t *testing.T) {
	py := numpyPython(t)
	for _, m := range []string{"venv", "pip", "setuptools", "wheel", "pytest"} {
		if err := exec.Command(py, "-c", "import "+m).Run(); err != nil {
			t.Skip("no module " + m + " for " + py + "; the test needs venv, pip, setuptools, wheel and pytest (apt-get install python3-venv python3-pip python3-setuptools python3-wheel python3-pytest)")
		}
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go on PATH to build the wheel with")
	}
	root, dir := repoRoot(t), t.TempDir()
	noGo := exec.Command(py, "-m", "pip", "wheel", "--no-index", "--no-build-isolation", "--no-deps", "-w", filepath.Join(dir, "nogo"), "./python")
	noGo.Dir, noGo.Env = root, noGoEnv(t, filepath.Dir(py))
	if out, err := noGo.CombinedOutput(); err == nil || !strings.Contains(string(out), "specsim-ext: Go is not on PATH: building the wheel compiles the simulate binary") {
		t.Errorf("pip wheel with no Go on PATH: %v; want a failure that says Go is not on PATH:\n%s", err, out)
	}
	whl := buildWheel(t, py, root, filepath.Join(dir, "dist"), filepath.Dir(goBin))
	venv := filepath.Join(dir, "venv")
	vpy := filepath.Join(venv, "bin", "python")
	runCmd(t, exec.Command(py, "-m", "venv", "--system-site-packages", venv)) // NumPy and pytest from the system
	runCmd(t, exec.Command(vpy, "-m", "pip", "install", "--no-index", "--no-deps", whl))

	env := noGoEnv(t, filepath.Join(venv, "bin"))
	sh := exec.Command("sh", "-c", "command -v simulate && simulate --version")
	sh.Env = env
	out := strings.Split(strings.TrimSpace(runCmd(t, sh)), "\n")
	bin := filepath.Join(venv, "bin", "simulate")
	if len(out) != 2 || out[0] != bin || !strings.HasPrefix(out[1], "simulate version ") {
		t.Fatalf("command -v simulate && simulate --version printed %q; want %s and its version line", out, bin)
	}
	checkStamp(t, root, bin, out[1])

	find := exec.Command(vpy, "-c", "import os, specsim_ext; print(specsim_ext.__file__); print(specsim_ext._binary(None)); "+
		"os.environ['SPECSIM_SIMULATE'] = '/override'; print(specsim_ext._binary(None))")
	find.Env = env
	where := strings.Split(strings.TrimSpace(runCmd(t, find)), "\n")
	if len(where) != 3 || !strings.HasPrefix(where[0], venv) || where[1] != bin || where[2] != "/override" {
		t.Errorf("specsim_ext, its binary and the binary under SPECSIM_SIMULATE=/override: %q; want the package under %s, %s and /override", where, venv, bin)
	}

	work := filepath.Join(dir, "work")
	if err := os.Mkdir(work, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"numpy_verify.py", "tree_verify.py", "test_pytest_plugin.py"} {
		raw, err := os.ReadFile(filepath.Join(root, "examples", "python", f))
		if err == nil {
			err = os.WriteFile(filepath.Join(work, f), raw, 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(vpy, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_pytest_plugin.py")
	cmd.Dir, cmd.Env = work, env
	if res := runCmd(t, cmd); !strings.Contains(res, "5 passed") {
		t.Errorf("pytest did not pass 5 tests:\n%s", res)
	}
}

// buildWheel runs pip wheel on root/python with goDir on PATH and returns
// the wheel's path; the wheel must be tagged py3-none-PLATFORM.
func buildWheel(t *testing.T, py, root, dist, goDir string) string {
	t.Helper()
	cmd := exec.Command(py, "-m", "pip", "wheel", "--no-index", "--no-build-isolation", "--no-deps", "-w", dist, "./python")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "PATH="+goDir+string(os.PathListSeparator)+os.Getenv("PATH"))
	runCmd(t, cmd)
	whl, _ := filepath.Glob(filepath.Join(dist, "*.whl"))
	if len(whl) != 1 {
		t.Fatalf("pip wheel left %d wheels in %s, want 1", len(whl), dist)
	}
	name := filepath.Base(whl[0])
	if !strings.HasPrefix(name, "specsim_ext-") || !strings.Contains(name, "-py3-none-") || strings.HasSuffix(name, "-none-any.whl") {
		t.Errorf("wheel %s: want a platform wheel tagged py3-none-PLATFORM", name)
	}
	return whl[0]
}

// noGoEnv is the environment without PYTHONPATH and SPECSIM_SIMULATE, with
// first on PATH and no directory that holds go or simulate.
func noGoEnv(t *testing.T, first string) []string {
	t.Helper()
	dirs := []string{first}
	for _, d := range filepath.SplitList(os.Getenv("PATH")) {
		_, goErr := os.Stat(filepath.Join(d, "go"))
		_, simErr := os.Stat(filepath.Join(d, "simulate"))
		if d != "" && goErr != nil && simErr != nil {
			dirs = append(dirs, d)
		}
	}
	env := []string{"PATH=" + strings.Join(dirs, string(os.PathListSeparator))}
	for _, e := range os.Environ() {
		if k, _, _ := strings.Cut(e, "="); k != "PATH" && k != "PYTHONPATH" && k != "SPECSIM_SIMULATE" && k != "GOROOT" {
			env = append(env, e)
		}
	}
	return env
}

// checkStamp: in a clone (.git a directory, git on PATH) the binary
// carries HEAD as its vcs.revision, whatever GOFLAGS says of -buildvcs;
// elsewhere it carries none and --version says so.
func checkStamp(t *testing.T, root, bin, version string) {
	t.Helper()
	info := runCmd(t, exec.Command("go", "version", "-m", bin))
	rev := ""
	for _, l := range strings.Split(info, "\n") {
		if f := strings.Fields(l); len(f) == 2 && f[0] == "build" && strings.HasPrefix(f[1], "vcs.revision=") {
			rev = strings.TrimPrefix(f[1], "vcs.revision=")
		}
	}
	_, noGit := exec.LookPath("git")
	if st, err := os.Stat(filepath.Join(root, ".git")); err == nil && st.IsDir() && noGit == nil {
		head := exec.Command("git", "rev-parse", "HEAD")
		head.Dir = root
		want := strings.TrimSpace(runCmd(t, head))
		if rev != want || !strings.Contains(version, "revision "+want) {
			t.Errorf("the wheel's simulate: vcs.revision %q, --version %q; want the checkout's HEAD %s", rev, version, want)
		}
	} else if rev != "" || !strings.Contains(version, "revision not stamped") {
		t.Errorf("the wheel's simulate in a checkout that is not a clone: vcs.revision %q, --version %q; want none", rev, version)
	}
}

// runCmd runs cmd and returns its combined output, failing the test with it
// when cmd fails.
func runCmd(t *testing.T, cmd *exec.Cmd) string {
	t.Helper()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, out)
	}
	return string(out)
}

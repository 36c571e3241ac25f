package notebooks

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const aptLine = "apt-get install jupyter-nbconvert python3-nbconvert python3-ipykernel python3-pandas python3-matplotlib"

// kernelPython is the interpreter of the jupyter script (its #! line), the
// one whose packages the python3 kernel sees; python3 otherwise.
func kernelPython(jupyter string) string {
	f, err := os.Open(jupyter)
	if err != nil {
		return "python3"
	}
	defer f.Close()
	line, _ := bufio.NewReader(f).ReadString('\n')
	if strings.HasPrefix(line, "#!") {
		if fs := strings.Fields(strings.TrimPrefix(line, "#!")); len(fs) == 1 {
			return fs[0]
		}
	}
	return "python3"
}

// TestNotebooks runs the main job at scale 0.01 (three experiments) and
// executes every notebook on its CSV exports; a failing cell (including
// the notebooks' own assertions) fails the test.
func TestNotebooks(t *testing.T) {
	jupyter, err := exec.LookPath("jupyter")
	if err != nil {
		t.Skip("jupyter is not installed; " + aptLine)
	}
	if out, err := exec.Command(jupyter, "nbconvert", "--version").CombinedOutput(); err != nil {
		t.Skipf("jupyter nbconvert does not run (%v: %s); %s", err, out, aptLine)
	}
	py := kernelPython(jupyter)
	if out, err := exec.Command(py, "-c", "import pandas, matplotlib, ipykernel").CombinedOutput(); err != nil {
		t.Skipf("%s lacks pandas, matplotlib or ipykernel (%s); %s", py, strings.TrimSpace(string(out)), aptLine)
	}
	if testing.Short() {
		t.Skip("-short: the notebooks take about 20 s")
	}
	nbs, _ := filepath.Glob("*.ipynb")
	if len(nbs) < 3 {
		t.Fatalf("notebooks: %v", nbs)
	}
	res := t.TempDir()
	cmd := exec.Command("go", "run", "../cmd/report", "reproduce", "--out", res, "--scale", "0.01", "--paper=false",
		"--only", "block-vs-token", "--only", "lossy-frontier", "--only", "multidraft")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("report reproduce: %v\n%s", err, out)
	}
	// One nbconvert for the three: the interpreter and jupyter start once
	// (each notebook still runs in its own kernel), which was a few
	// CPU-seconds of the default suite per notebook.
	outDir := t.TempDir()
	args := append([]string{"nbconvert", "--to", "notebook", "--execute", "--output-dir", outDir,
		"--ExecutePreprocessor.timeout=300"}, nbs...)
	cmd = exec.Command(jupyter, args...)
	cmd.Env = append(os.Environ(), "SPECSIM_RESULTS="+res, "PYDEVD_DISABLE_FILE_VALIDATION=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("%v: %v\n%s", nbs, err, tail(string(out), 4000))
	}
	for _, nb := range nbs { // each executed notebook was written
		if _, err := os.Stat(filepath.Join(outDir, nb)); err != nil {
			t.Errorf("%s: not executed: %v", nb, err)
		}
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

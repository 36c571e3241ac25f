package external

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The package docstring of specsim_ext says which positional parameter
// receives the Sampling in each mode, and the server agrees: for each
// mode the least number of positional parameters (two or more: a
// function of one argument takes a protocol-2 Batch, which carries its
// sampling) for which takes_sampling is true is the ordinal the docstring names (it said "a fourth
// parameter" for both modes; verify mode takes it fifth).
func TestSamplingParameterDocumented(t *testing.T) {
	py := numpyPython(t)
	script := `
import inspect, re, specsim_ext
from specsim_ext._server import takes_sampling
doc = specsim_ext.__doc__
ordinals = {"fourth": 4, "fifth": 5, "sixth": 6}
for mode in ("verify", "step"):
    m = re.search(r"the (\w+)\s+in\s+" + mode + r"\s+mode", doc)
    if not m:
        raise SystemExit("docstring names no position for " + mode + " mode")
    said = ordinals[m.group(1)]
    least = None
    for n in range(2, 8):  # a function of one argument takes a Batch
        ns = {}
        exec("def f(" + ", ".join("a%d" % i for i in range(n)) + "): pass", ns)
        if takes_sampling(ns["f"], mode):
            least = n
            break
    if least != said:
        raise SystemExit("%s mode: the docstring says parameter %d, takes_sampling wants %s" % (mode, said, least))
print("ok")
`
	cmd := exec.Command(py, "-c", script)
	cmd.Dir = filepath.Join(repoRoot(t), "python")
	out, err := cmd.CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "ok" {
		t.Errorf("%v: %s", err, out)
	}
}

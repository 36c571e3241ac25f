package external

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Issue 30 (lows): the pytest fixture refuses an `expect` that is not a
// verdict word before any check (it accepted any string, so a typo failed
// every run with "want violatd"), and specsim_ext.check passes a
// fractional timeout exactly (0.5 became "0s"). A stand-in binary records
// the argv check builds; pytest runs the fixture.
func TestPythonTimeoutAndExpect(t *testing.T) {
	py := numpyPython(t)
	if exec.Command(py, "-c", "import pytest").Run() != nil {
		t.Skip("no pytest for " + py + " (apt-get install python3-pytest)")
	}
	dir := t.TempDir()
	argv := filepath.Join(dir, "argv")
	bin := filepath.Join(dir, "simulate")
	os.WriteFile(bin, []byte("#!/bin/sh\nprintf '%s\\n' \"$@\" > '"+argv+"'\necho '{\"verdict\":\"not_detected\"}'\n"), 0o755)
	test := filepath.Join(dir, "test_fixture.py")
	os.WriteFile(test, []byte(`import os
import pytest
import specsim_ext

BIN = `+"'"+bin+"'"+`
ARGV = `+"'"+argv+"'"+`

def test_timeouts():
    for t, want in [(0.5, "500000000ns"), (60, "60000000000ns"), (2.5e-3, "2500000ns"), (1e-7, "100ns")]:
        specsim_ext.check("m:f", binary=BIN, timeout=t)
        args = open(ARGV).read().split("\n")
        assert args[args.index("--timeout") + 1] == want, (t, args)

@pytest.mark.parametrize("expect", ["violatd", "Violated", "", "not detected", "passed", None, 3])
def test_bad_expect(specsim_check, expect):
    if os.path.exists(ARGV):
        os.remove(ARGV)
    with pytest.raises(ValueError, match="expect = .*; give one of not_detected, violated, inconclusive"):
        specsim_check("m:f", expect=expect, binary=BIN)
    assert not os.path.exists(ARGV), "the check ran"

@pytest.mark.parametrize("expect", ["not_detected"])
def test_good_expect(specsim_check, expect):
    assert specsim_check("m:f", expect=expect, binary=BIN)["verdict"] == expect
`), 0o644)
	cmd := exec.Command(py, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "specsim_ext.pytest_plugin", test)
	cmd.Dir = dir
	// only -p loads the plugin: where a wheel build left
	// python/specsim_ext.egg-info on the path, its pytest11 entry point
	// would register it a second time ("Plugin already registered")
	cmd.Env = append(pyEnv(t), "PYTEST_DISABLE_PLUGIN_AUTOLOAD=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "9 passed") {
		t.Fatalf("pytest: %v\n%s", err, out)
	}
}

package longtest

import (
	"os"
	"testing"
)

// Env is the environment variable that enables the long tests.
const Env = "SPECSIM_LONG"

// Enabled reports whether the long tests run (SPECSIM_LONG=1).
func Enabled() bool { return os.Getenv(Env) == "1" }

// Skip skips a test that exists only at its long size, saying how to run
// it.
func Skip(t testing.TB) {
	t.Helper()
	if !Enabled() {
		t.Skip("long test: run with " + Env + "=1")
	}
}

// Pick returns long when the long tests are enabled and short otherwise:
// the size of a check that runs in both suites.
func Pick[T any](short, long T) T {
	if Enabled() {
		return long
	}
	return short
}

// Package cliutil holds what the command-line front ends (cmd/simulate,
// cmd/report) share: the mapping of errors to exit codes (CodeOf, over
// internal/diag's kinds and table of codes) and the process boundary
// (Run: one line per failure, crash files, flag names in errors), flags
// after positional arguments, the one-argument check (OneArg), JSON
// output that survives non-finite numbers, and the plain-text table of
// result rows.
package cliutil // import "github.com/specsim/specsim/internal/cliutil"

// Package cliutil holds what the command-line front ends (cmd/simulate,
// cmd/report) share: the exit codes and errors that carry them, flags
// after positional arguments, the one-argument check (OneArg), JSON
// output that survives non-finite numbers, and the plain-text table of
// result rows.
package cliutil // import "github.com/specsim/specsim/internal/cliutil"

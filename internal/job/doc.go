// Package job holds what every long-running command shares, once: the
// kinds of failure as sentinel errors (ErrUsage, ErrIO, ErrViolated,
// ErrInterrupted; test them with errors.Is, wrap with Usage, IO, …), the
// context cancelled by SIGINT/SIGTERM (SignalContext), and progress
// reporting (Progress: a bar with ETA on a terminal, plain lines at most
// every interval otherwise, as in a batch job's log).
//
// It imports no command-line library: library packages (experiments,
// report) classify their errors here, and internal/cliutil maps the kinds
// to exit codes.
package job

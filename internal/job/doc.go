// Package job holds what every long-running command shares, once: the
// context cancelled by SIGINT/SIGTERM (SignalContext) and progress
// reporting (Progress: a bar with ETA on a terminal, plain lines at most
// every interval otherwise, as in a batch job's log).
//
// It imports no command-line library. The kinds of failure that libraries
// mark their errors with are internal/diag's.
package job

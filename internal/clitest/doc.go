// Package clitest runs the real simulate and report binaries on a table of
// hostile command lines (impossible parameters, outputs that name inputs,
// corrupt and truncated files, overflowing counts, bad flags) and asserts
// what a script on a cluster relies on: the documented exit code, one
// line on stderr, no panic or stack trace, every input byte-identical
// afterwards, and peak memory under a stated bound. A second table sends
// SIGINT to long-running commands and asserts that each stops within a
// stated time with the interrupted exit code.
//
// The binaries are built once per test run from this checkout (go build),
// so the tests need the Go toolchain on PATH.
package clitest // import "github.com/specsim/specsim/internal/clitest"

package main

import (
	"context"
	"errors"
	"strings"

	"github.com/urfave/cli/v2"
)

// Exit codes of simulate. Scripts depend on them: never renumber.
const (
	// ExitOK: the command ran and, for checks, found what was expected.
	ExitOK = 0
	// ExitError: an unexpected internal failure.
	ExitError = 1
	// ExitUsage: bad flags or bad input (a malformed distribution, source,
	// parameter or spec). Nothing was computed.
	ExitUsage = 2
	// ExitViolated: a check ran and found the target law violated
	// ('check'), or the audit found a verdict other than expected.
	ExitViolated = 3
	// ExitInterrupted: stopped by SIGINT/SIGTERM; finished results were
	// reported or kept.
	ExitInterrupted = 4
	// ExitIO: reading or writing a file failed.
	ExitIO = 5
)

type exitErr struct {
	code int
	err  error
}

func (e exitErr) Error() string { return e.err.Error() }
func (e exitErr) Unwrap() error { return e.err }
func (e exitErr) ExitCode() int { return e.code }

func usageErr(err error) error       { return exitErr{ExitUsage, err} }
func ioErr(err error) error          { return exitErr{ExitIO, err} }
func violatedErr(err error) error    { return exitErr{ExitViolated, err} }
func interruptedErr(err error) error { return exitErr{ExitInterrupted, err} }

func codeOf(err error) int {
	var e exitErr
	if errors.As(err, &e) {
		return e.code
	}
	var ec cli.ExitCoder
	if errors.As(err, &ec) {
		return ec.ExitCode()
	}
	if errors.Is(err, context.Canceled) {
		return ExitInterrupted
	}
	// urfave reports flag problems as plain errors.
	msg := err.Error()
	if strings.Contains(msg, "flag provided but not defined") || strings.Contains(msg, "Required flag") ||
		strings.Contains(msg, "invalid value") || strings.Contains(msg, "No help topic") {
		return ExitUsage
	}
	return ExitError
}

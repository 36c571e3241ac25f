package diag

import "errors"

// Exit codes of simulate and report, one per kind of failure plus success
// and internal errors. Scripts depend on them: never renumber.
const (
	// ExitOK: the command ran and, for checks, found what was expected.
	ExitOK = 0
	// ExitError: an unexpected internal failure (a bug in the harness, not
	// in the input); also any error of no kind.
	ExitError = 1
	// ExitUsage (ErrUsage): bad flags or bad input (a malformed
	// distribution, source, parameter, spec or log). Nothing was computed.
	ExitUsage = 2
	// ExitViolated (ErrViolated): a check ran and found the target law
	// violated ('check'), or the audit found a verdict other than expected.
	ExitViolated = 3
	// ExitInterrupted (ErrInterrupted): stopped by SIGINT/SIGTERM; finished
	// results were reported or kept.
	ExitInterrupted = 4
	// ExitIO (ErrIO): reading or writing a file failed.
	ExitIO = 5
	// ExitInconclusive (ErrInconclusive): a check ran and found no
	// violation, but some of its tests had no power (no degrees of freedom,
	// or too few trials to detect even a total deviation); rerun with more
	// trials.
	ExitInconclusive = 6
	// ExitContract (ErrContract): a check ran, no test of the law found a
	// deviation, but the implementation broke its answer's contract (an
	// external sampler's accepted tokens are not the drafts it returned);
	// fix the answer, not the law.
	ExitContract = 7
)

// Kind is a kind of failure. Its exit code is fixed (Code); its message
// names the kind only, since an error marked with a kind keeps its own
// message.
type Kind struct {
	name string
	code int
}

// Error returns the kind's name, such as "usage error".
func (k *Kind) Error() string { return k.name }

// Code returns the exit code of simulate and report for this kind.
func (k *Kind) Code() int { return k.code }

// The kinds of failure, with their exit codes: the one table.
var (
	// ErrUsage: bad flags or bad input; nothing was computed.
	ErrUsage = &Kind{"usage error", ExitUsage}
	// ErrViolated: a check ran and found the target law violated.
	ErrViolated = &Kind{"check violated", ExitViolated}
	// ErrInterrupted: stopped by SIGINT/SIGTERM; finished work was kept.
	ErrInterrupted = &Kind{"interrupted", ExitInterrupted}
	// ErrIO: reading or writing a file failed.
	ErrIO = &Kind{"i/o error", ExitIO}
	// ErrInconclusive: a check ran and found no violation, but some of its
	// tests had no power to detect one.
	ErrInconclusive = &Kind{"check inconclusive", ExitInconclusive}
	// ErrContract: a check ran and found no deviation of the law, but the
	// implementation's answers broke their contract.
	ErrContract = &Kind{"contract breach", ExitContract}
)

// Kinds lists every kind, in the order of their exit codes.
var Kinds = []*Kind{ErrUsage, ErrViolated, ErrInterrupted, ErrIO, ErrInconclusive, ErrContract}

// marked is err marked with a kind; its message is err's alone.
type marked struct {
	kind *Kind
	err  error
}

func (e *marked) Error() string { return e.err.Error() }
func (e *marked) Unwrap() error { return e.err }
func (e *marked) Kind() *Kind   { return e.kind }

// Is reports whether target is the kind e is marked with.
func (e *marked) Is(target error) bool { return target == error(e.kind) }

func mark(kind *Kind, err error) error {
	if err == nil {
		return nil
	}
	return &marked{kind, err}
}

// Usage marks err as a usage error (ErrUsage): bad flags or input. A nil
// err stays nil, as for every marking function.
func Usage(err error) error { return mark(ErrUsage, err) }

// IO marks err as a file that could not be read or written (ErrIO).
func IO(err error) error { return mark(ErrIO, err) }

// Violated marks err as a check that found the target law violated
// (ErrViolated).
func Violated(err error) error { return mark(ErrViolated, err) }

// Inconclusive marks err as a check whose tests could not decide
// (ErrInconclusive).
func Inconclusive(err error) error { return mark(ErrInconclusive, err) }

// Contract marks err as a check whose implementation broke its answer's
// contract while no test of the law rejected (ErrContract).
func Contract(err error) error { return mark(ErrContract, err) }

// Interrupted marks err as a run stopped by a signal (ErrInterrupted).
func Interrupted(err error) error { return mark(ErrInterrupted, err) }

// New returns a sentinel error with message text that carries kind: an
// error wrapping it (fmt.Errorf("%w: ...", s)) matches both s and kind
// with errors.Is. Libraries declare their data conditions with it, such as
// a log's invalid content (usage) or undecodable file (I/O).
func New(kind *Kind, text string) error { return &marked{kind, errors.New(text)} }

// KindOf returns the outermost kind err is marked with, or nil when it
// has none (an internal error).
func KindOf(err error) *Kind {
	var k interface{ Kind() *Kind }
	if errors.As(err, &k) {
		return k.Kind()
	}
	return nil
}

package job

import "errors"

// The kinds of failure. A command's exit code follows from the kind
// (internal/cliutil.CodeOf); an error of no kind is an internal error.
var (
	// ErrUsage: bad flags or bad input; nothing was computed.
	ErrUsage = errors.New("usage error")
	// ErrIO: reading or writing a file failed.
	ErrIO = errors.New("i/o error")
	// ErrViolated: a check ran and found the target law violated.
	ErrViolated = errors.New("check violated")
	// ErrInterrupted: stopped by SIGINT/SIGTERM; finished work was kept.
	ErrInterrupted = errors.New("interrupted")
	// ErrInconclusive: a check ran and found no violation, but some of its
	// tests had no power to detect one.
	ErrInconclusive = errors.New("check inconclusive")
)

// kindErr is err marked with a kind; its message is err's alone.
type kindErr struct {
	kind, err error
}

func (e kindErr) Error() string        { return e.err.Error() }
func (e kindErr) Unwrap() error        { return e.err }
func (e kindErr) Is(target error) bool { return target == e.kind }
func mark(kind, err error) error       { return kindErr{kind, err} }
func (e kindErr) Kind() error          { return e.kind }

// Usage marks err as a usage error (ErrUsage).
func Usage(err error) error { return mark(ErrUsage, err) }

// IO marks err as a file that could not be read or written (ErrIO).
func IO(err error) error { return mark(ErrIO, err) }

// Violated marks err as a check that found the target law violated.
func Violated(err error) error { return mark(ErrViolated, err) }

// Inconclusive marks err as a check whose tests could not decide.
func Inconclusive(err error) error { return mark(ErrInconclusive, err) }

// Interrupted marks err as a run stopped by a signal.
func Interrupted(err error) error { return mark(ErrInterrupted, err) }

// Kind returns the outermost kind err is marked with, or nil.
func Kind(err error) error {
	var k interface{ Kind() error }
	if errors.As(err, &k) {
		return k.Kind()
	}
	return nil
}

package diag

import (
	"errors"
	"fmt"
	"strings"
)

// ParamError is a bad value of one named input of a library: a field of
// its options, a parameter of a spec. Its message is the name followed by
// the rest, "workers = -1; use 0 (all cores) or more". It is a usage error
// (ErrUsage). Libraries name the field as their callers see it, never a
// command-line flag; a front end shows the flag instead (Rename).
type ParamError struct {
	// Name is the field or parameter, as the library names it.
	Name string
	rest error
}

// Param returns a ParamError naming name; the message goes on with
// fmt.Errorf(format, a...), so format starts with its own separator and
// may wrap an error with %w:
//
//	diag.Param("workers", " = %d; use 0 (all cores) or more", n)
//	diag.Param("only", ": %w", err)
func Param(name, format string, a ...any) error {
	return &ParamError{Name: name, rest: fmt.Errorf(format, a...)}
}

// ParamOf returns err as a ParamError naming name, for the errors of
// packages that cannot import diag (package sim, whose CheckTrials names
// what its caller passes): when err's message begins with name, the rest
// of it follows the name; otherwise the message is "name: err". err stays
// in the chain (errors.Is). A nil err gives nil.
func ParamOf(name string, err error) error {
	if err == nil {
		return nil
	}
	rest := ": " + err.Error()
	if m := err.Error(); strings.HasPrefix(m, name) {
		rest = m[len(name):]
	}
	return &ParamError{Name: name, rest: &restError{rest, err}}
}

// restError is the message after a ParamError's name, wrapping err.
type restError struct {
	msg string
	err error
}

func (e *restError) Error() string { return e.msg }
func (e *restError) Unwrap() error { return e.err }

// Error returns the name followed by the rest of the message.
func (e *ParamError) Error() string { return e.Name + e.rest.Error() }

// Unwrap returns the error the message wraps with %w, or nil.
func (e *ParamError) Unwrap() error { return errors.Unwrap(e.rest) }

// Kind returns ErrUsage: a bad input value is the user's to fix.
func (e *ParamError) Kind() *Kind { return ErrUsage }

// Is reports whether target is ErrUsage.
func (e *ParamError) Is(target error) bool { return target == error(ErrUsage) }

// Rename returns err with each ParamError in its chain that show renames
// (show(name) returns the new name and true) shown under its new name:
// the first occurrence of the ParamError's message in err's message is
// rewritten, and the chain below is err's, so kinds and errors.Is and
// errors.As answer as for err. It returns err itself when nothing is
// renamed; a ParamError renamed once is not renamed again. The front
// ends rename a field to the flag that set it: "workers = -1; …" becomes
// "--workers = -1; …".
func Rename(err error, show func(name string) (string, bool)) error {
	if err == nil {
		return nil
	}
	var params []*ParamError
	done := map[*ParamError]bool{}
	var walk func(error)
	walk = func(e error) {
		for e != nil {
			switch x := e.(type) {
			case *ParamError:
				params = append(params, x)
			case *renamed:
				for p := range x.done {
					done[p] = true
				}
			}
			switch u := e.(type) {
			case interface{ Unwrap() error }:
				e = u.Unwrap()
			case interface{ Unwrap() []error }:
				for _, x := range u.Unwrap() {
					walk(x)
				}
				return
			default:
				return
			}
		}
	}
	walk(err)
	msg := err.Error()
	now := map[*ParamError]bool{}
	for _, pe := range params {
		if done[pe] {
			continue
		}
		to, ok := show(pe.Name)
		if !ok || to == pe.Name {
			continue
		}
		old := pe.Error()
		if i := strings.Index(msg, old); i >= 0 {
			msg = msg[:i] + to + pe.rest.Error() + msg[i+len(old):]
			now[pe] = true
		}
	}
	if len(now) == 0 {
		return err
	}
	for p := range done {
		now[p] = true
	}
	return &renamed{msg: msg, err: err, done: now}
}

// renamed is err with a rewritten message; done holds the ParamErrors
// renamed in it.
type renamed struct {
	msg  string
	err  error
	done map[*ParamError]bool
}

func (e *renamed) Error() string { return e.msg }
func (e *renamed) Unwrap() error { return e.err }

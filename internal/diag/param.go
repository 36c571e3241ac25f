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
// renamed. The front ends rename a field to the flag that set it:
// "workers = -1; …" becomes "--workers = -1; …".
func Rename(err error, show func(name string) (string, bool)) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	changed := false
	var walk func(error)
	walk = func(e error) {
		for e != nil {
			if pe, ok := e.(*ParamError); ok {
				if to, ok := show(pe.Name); ok && to != pe.Name {
					old := pe.Error()
					if i := strings.Index(msg, old); i >= 0 {
						msg = msg[:i] + to + pe.rest.Error() + msg[i+len(old):]
						changed = true
					}
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
	if !changed {
		return err
	}
	return &renamed{msg: msg, err: err}
}

// renamed is err with a rewritten message.
type renamed struct {
	msg string
	err error
}

func (e *renamed) Error() string { return e.msg }
func (e *renamed) Unwrap() error { return e.err }

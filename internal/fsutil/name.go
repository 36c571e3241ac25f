package fsutil

import (
	"fmt"
	"path/filepath"
	"regexp"

	"github.com/specsim/specsim/internal/diag"
)

// ErrBadName is wrapped by CheckName's and Under's errors: a file name
// derived from input (an experiment's name in a results file's metadata,
// a swept axis) that could leave its directory or is not a plain name; it
// is a usage error (diag.ErrUsage).
var ErrBadName = diag.New(diag.ErrUsage, "not a safe file name")

// MaxNameLen is the longest name CheckName accepts.
const MaxNameLen = 128

// namePattern is what a file name derived from input may be: a letter or
// digit, then letters, digits, '.', '_' and '-'. No separator, no "..",
// no leading dot (hidden or relative), no space or control character.
var namePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// CheckName returns an error wrapping ErrBadName unless name matches
// [A-Za-z0-9][A-Za-z0-9._-]* and has at most MaxNameLen bytes; the
// message quotes the name escaped (%q) and states the rule.
func CheckName(name string) error {
	if len(name) > MaxNameLen || !namePattern.MatchString(name) {
		return fmt.Errorf("%w: %.80q; a name that becomes a file name may hold letters, digits, '.', '_' and '-' (not first), at most %d bytes", ErrBadName, name, MaxNameLen)
	}
	return nil
}

// Under returns dir joined with the file name name (and ext, such as
// ".csv", appended), after checking name with CheckName and that the
// joined path is inside dir. Every file name derived from input is joined
// through Under.
func Under(dir, name, ext string) (string, error) {
	if err := CheckName(name); err != nil {
		return "", err
	}
	p := filepath.Join(dir, name+ext)
	rel, err := filepath.Rel(dir, p)
	if err != nil || !filepath.IsLocal(rel) || filepath.Dir(rel) != "." {
		return "", fmt.Errorf("%w: %q leaves %s", ErrBadName, name+ext, dir)
	}
	return p, nil
}

package gitrev

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"time"
)

// Unknown is the revision recorded when neither the toolchain nor git
// knows it.
const Unknown = "unknown"

// Build is what the toolchain stamped into a binary.
type Build struct {
	// Module is the main module's path and Version its version: a
	// pseudo-version such as v0.0.0-20261125221833-18d6fa7b2063+dirty
	// under 'go build' in a checkout, "(devel)" otherwise.
	Module, Version string
	// GoVersion is the toolchain that built the binary.
	GoVersion string
	// Revision is vcs.revision, "" when none was stamped; Modified is
	// vcs.modified (the checkout had uncommitted changes).
	Revision string
	Modified bool
	// Time is vcs.time, the commit time of Revision (RFC 3339), "" when
	// absent. The toolchain stamps no build time.
	Time string
}

// FromInfo reads a Build from build information (nil: none, as
// debug.ReadBuildInfo reports for a binary built without module support).
func FromInfo(bi *debug.BuildInfo) Build {
	b := Build{GoVersion: runtime.Version()}
	if bi == nil {
		return b
	}
	b.Module, b.Version = bi.Main.Path, bi.Main.Version
	if bi.GoVersion != "" {
		b.GoVersion = bi.GoVersion
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Revision = s.Value
		case "vcs.modified":
			b.Modified = s.Value == "true"
		case "vcs.time":
			b.Time = s.Value
		}
	}
	return b
}

// Current returns the running binary's Build.
var Current = sync.OnceValue(func() Build {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		bi = nil
	}
	return FromInfo(bi)
})

// Stamped returns the stamped revision, suffixed "+dirty" when modified,
// or "" when none was stamped.
func (b Build) Stamped() string {
	if b.Revision == "" {
		return ""
	}
	if b.Modified {
		return b.Revision + "+dirty"
	}
	return b.Revision
}

// String is the version line of --version (after "NAME version "): the
// module version, the revision with "(modified)", its commit time and the
// Go version; for an unstamped binary it says why there is no revision.
func (b Build) String() string {
	v := b.Version
	if v == "" {
		v = "(devel)"
	}
	var s strings.Builder
	s.WriteString(v)
	if b.Revision == "" {
		s.WriteString(", revision not stamped (go run, go test, -buildvcs=false or a git worktree; build with 'go build' in a clone to stamp it)")
	} else {
		s.WriteString(", revision " + b.Revision)
		if b.Modified {
			s.WriteString(" (modified)")
		}
		if b.Time != "" {
			s.WriteString(", committed " + b.Time)
		}
	}
	fmt.Fprintf(&s, ", %s", b.GoVersion)
	return s.String()
}

var lookupOnce = sync.OnceValue(lookup)

// Revision returns the revision for provenance: the stamped one
// (Current().Stamped()), else that of the checkout this package was
// compiled from (git, in SourceDir: `git rev-parse HEAD`, suffixed
// "+dirty" when `git status --porcelain` lists any change), else Unknown
// (git absent, no source directory, or not a checkout). Git never runs in
// the working directory, whose checkout may be anyone's (its
// core.fsmonitor would run a command of theirs). The git lookup runs at
// most once per process.
func Revision() string {
	return orLookup(Current().Stamped())
}

// orLookup returns stamped, or the git lookup when it is "".
func orLookup(stamped string) string {
	if stamped != "" {
		return stamped
	}
	return lookupOnce()
}

func lookup() string {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	out, err := gitOutput(ctx, "rev-parse", "HEAD")
	if err != nil {
		return Unknown
	}
	r := strings.TrimSpace(string(out))
	if r == "" {
		return Unknown
	}
	st, err := gitOutput(ctx, "status", "--porcelain")
	if err == nil && len(strings.TrimSpace(string(st))) > 0 {
		r += "+dirty"
	}
	return r
}

// SourceDir returns the root of the module this package was compiled
// from: the nearest directory holding go.mod above this file's
// compile-time path (go run, go test and an unstamped go build record it),
// or "" when that path is not absolute (-trimpath) or no longer there.
var SourceDir = sync.OnceValue(func() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok || !filepath.IsAbs(file) {
		return ""
	}
	for d := filepath.Dir(file); ; d = filepath.Dir(d) {
		if st, err := os.Stat(filepath.Join(d, "go.mod")); err == nil && st.Mode().IsRegular() {
			return d
		}
		if filepath.Dir(d) == d {
			return ""
		}
	}
})

// errNoSource is gitOutput's error when there is no SourceDir.
var errNoSource = errors.New("gitrev: no source directory")

// gitOutput runs git with args in SourceDir, never in the working
// directory, and returns its stdout. Git stops looking for the repository
// at the source directory's parent (GIT_CEILING_DIRECTORIES: a module in
// the module cache is no checkout's), and runs no fsmonitor command or
// hook whatever a configuration says.
func gitOutput(ctx context.Context, args ...string) ([]byte, error) {
	dir := SourceDir()
	if dir == "" {
		return nil, errNoSource
	}
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir, "-c", "core.fsmonitor=false", "-c", "core.hooksPath=" + os.DevNull}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CEILING_DIRECTORIES="+filepath.Dir(dir), "GIT_OPTIONAL_LOCKS=0")
	return cmd.Output()
}

// CommitDate returns the committer date (YYYY-MM-DD) of revision rev in
// the checkout of SourceDir (never the working directory), from `git show -s
// --format=%cs`: a date fixed by the commit, so a document dated by it is
// the same whenever it is rebuilt. It returns "" when rev is not a hex
// revision (such as Unknown) or git cannot resolve it.
func CommitDate(rev string) string {
	if !hexRev.MatchString(rev) {
		return ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	out, err := gitOutput(ctx, "show", "-s", "--format=%cs", rev)
	if err != nil {
		return ""
	}
	d := strings.TrimSpace(string(out))
	if !isoDate.MatchString(d) {
		return ""
	}
	return d
}

var (
	hexRev  = regexp.MustCompile(`^[0-9a-f]{7,64}$`)
	isoDate = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)
)

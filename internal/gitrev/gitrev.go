package gitrev

import (
	"context"
	"fmt"
	"os/exec"
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
// (Current().Stamped()), else that of the checkout holding the working
// directory from `git rev-parse HEAD`, suffixed "+dirty" when `git status
// --porcelain` lists any change, else Unknown (git absent, or not a
// checkout). The git lookup runs at most once per process.
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
	out, err := exec.CommandContext(ctx, "git", "rev-parse", "HEAD").Output()
	if err != nil {
		return Unknown
	}
	r := strings.TrimSpace(string(out))
	if r == "" {
		return Unknown
	}
	st, err := exec.CommandContext(ctx, "git", "status", "--porcelain").Output()
	if err == nil && len(strings.TrimSpace(string(st))) > 0 {
		r += "+dirty"
	}
	return r
}

// CommitDate returns the committer date (YYYY-MM-DD) of revision rev in
// the checkout holding the working directory, from `git show -s
// --format=%cs`: a date fixed by the commit, so a document dated by it is
// the same whenever it is rebuilt. It returns "" when rev is not a hex
// revision (such as Unknown) or git cannot resolve it.
func CommitDate(rev string) string {
	if !hexRev.MatchString(rev) {
		return ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "git", "show", "-s", "--format=%cs", rev).Output()
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

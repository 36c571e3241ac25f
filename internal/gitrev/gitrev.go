// Package gitrev finds the git revision of the working directory's
// checkout, for provenance when the Go toolchain did not stamp VCS
// information into the binary (go run, go test, a build outside a
// checkout's root module).
package gitrev

import (
	"context"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// Unknown is the revision recorded when neither the toolchain nor git
// knows it.
const Unknown = "unknown"

var (
	once sync.Once
	rev  string
)

// Or returns stamped unless it is Unknown or empty; then the revision of
// the checkout holding the working directory from `git rev-parse HEAD`,
// suffixed "+dirty" when `git status --porcelain` lists any change, or
// Unknown when git is absent or the directory is not a checkout. The git
// lookup runs once per process.
func Or(stamped string) string {
	if stamped != "" && stamped != Unknown {
		return stamped
	}
	once.Do(func() { rev = lookup() })
	return rev
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

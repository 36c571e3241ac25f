// Package gitrev says which source the running binary was built from, for
// --version and for the provenance stored with results and logs.
//
// The first answer is what the Go toolchain stamped into the binary
// (runtime/debug.ReadBuildInfo: the main module's version and the
// vcs.revision, vcs.modified and vcs.time settings), which does not depend
// on the working directory. The toolchain stamps them only under
// -buildvcs=auto (the default) for 'go build' and 'go install' run in a
// git checkout; 'go run' and 'go test' stamp nothing unless -buildvcs=true
// is given, -buildvcs=false (also through GOFLAGS) stamps nothing, and a
// linked git worktree, whose .git is a file, is not recognised as a
// checkout (golang/go#58218). Where nothing was stamped, Revision falls
// back to asking git about the checkout the package was compiled from
// (SourceDir), never the working directory's: a checkout there may be
// anyone's, and git would run its core.fsmonitor command. Git runs with
// fsmonitor and hooks disabled, and stops at the source directory.
package gitrev // import "github.com/specsim/specsim/internal/gitrev"

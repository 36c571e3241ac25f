package gitrev

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strings"
	"testing"
	"time"
)

const rev = "18d6fa7b2063db70a6f1477bb97447f67f892612"

func info(settings ...string) *debug.BuildInfo {
	bi := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/specsim/specsim", Version: "v0.0.0-20261125221833-18d6fa7b2063+dirty"}}
	for i := 0; i < len(settings); i += 2 {
		bi.Settings = append(bi.Settings, debug.BuildSetting{Key: settings[i], Value: settings[i+1]})
	}
	return bi
}

// TestFromInfo: the version line and the provenance revision of stamped,
// modified and unstamped build information, exactly.
func TestFromInfo(t *testing.T) {
	for _, c := range []struct {
		name          string
		bi            *debug.BuildInfo
		stamped, line string
	}{
		{"stamped", info("vcs", "git", "vcs.revision", rev, "vcs.time", "2026-11-25T22:18:33Z", "vcs.modified", "false"), rev,
			"v0.0.0-20261125221833-18d6fa7b2063+dirty, revision " + rev + ", committed 2026-11-25T22:18:33Z, go1.26.8"},
		{"modified", info("vcs.revision", rev, "vcs.time", "2026-11-25T22:18:33Z", "vcs.modified", "true"), rev + "+dirty",
			"v0.0.0-20261125221833-18d6fa7b2063+dirty, revision " + rev + " (modified), committed 2026-11-25T22:18:33Z, go1.26.8"},
		{"no time", info("vcs.revision", rev), rev,
			"v0.0.0-20261125221833-18d6fa7b2063+dirty, revision " + rev + ", go1.26.8"},
		{"unstamped", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/specsim/specsim", Version: "(devel)"}}, "",
			"(devel), revision not stamped (go run, go test, -buildvcs=false or a git worktree; build with 'go build' in a clone to stamp it), go1.26.8"},
	} {
		b := FromInfo(c.bi)
		if got := b.Stamped(); got != c.stamped {
			t.Errorf("%s: Stamped() = %q, want %q", c.name, got, c.stamped)
		}
		if got := b.String(); got != c.line {
			t.Errorf("%s: String() =\n%q, want\n%q", c.name, got, c.line)
		}
		if c.stamped != "" {
			if got := orLookup(b.Stamped()); got != c.stamped {
				t.Errorf("%s: a stamped revision is kept: got %q", c.name, got)
			}
		}
	}
	if b := FromInfo(nil); b.Revision != "" || b.GoVersion == "" {
		t.Errorf("FromInfo(nil) = %+v, want no revision and the running Go version", b)
	}
}

// TestRevisionInThisCheckout: the test binary is stamped only under
// -buildvcs=true; either way Revision is this checkout's HEAD (40 hex),
// stamped or from git.
func TestRevisionInThisCheckout(t *testing.T) {
	out, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skipf("git rev-parse HEAD: %v (not a checkout, or no git)", err)
	}
	got := Revision()
	if !regexp.MustCompile(`^[0-9a-f]{40}(\+dirty)?$`).MatchString(got) {
		t.Fatalf("Revision() = %q, want a 40-hex revision", got)
	}
	if !strings.HasPrefix(got, strings.TrimSpace(string(out))) {
		t.Fatalf("Revision() = %q, HEAD is %s", got, out)
	}
}

// TestStampedBinary builds a tiny program that uses this package's code in
// a fresh git repository and checks what each way of building gives:
// 'go build' stamps HEAD (and "+dirty" once a file changes), while 'go
// run' stamps nothing, so Revision asks git about the working directory.
func TestStampedBinary(t *testing.T) {
	for _, tool := range []string{"git", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not on PATH", tool)
		}
	}
	src, err := os.ReadFile("gitrev.go")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/stamp\n\ngo 1.26\n")
	write("gitrev/gitrev.go", string(src))
	write("main.go", `package main

import (
	"fmt"

	"example.com/stamp/gitrev"
)

func main() {
	b := gitrev.Current()
	fmt.Printf("%s\n%s\n%s\n", b.Stamped(), gitrev.Revision(), b)
}
`)
	// GOFLAGS is cleared: an environment's -buildvcs=false would hide what
	// the toolchain does by default.
	env := append(os.Environ(), "GOFLAGS=", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	run := func(name string, args ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, name, args...)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.Output()
		if err != nil {
			var stderr []byte
			if ee, ok := err.(*exec.ExitError); ok {
				stderr = ee.Stderr
			}
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, stderr)
		}
		return string(out)
	}
	run("git", "init", "-q")
	run("git", "add", ".")
	run("git", "commit", "-q", "-m", "stamp test")
	head := strings.TrimSpace(run("git", "rev-parse", "HEAD"))
	lines := func(out string) []string { return strings.Split(strings.TrimSuffix(out, "\n"), "\n") }

	bin := filepath.Join(t.TempDir(), "stamp")
	run("go", "build", "-buildvcs=auto", "-o", bin, ".")
	got := lines(run(bin))
	if got[0] != head || got[1] != head || !strings.Contains(got[2], "revision "+head+", committed ") {
		t.Fatalf("go build in a clean checkout: got %q, want revision %s", got, head)
	}

	write("main_extra.go", "package main\n")
	run("go", "build", "-buildvcs=auto", "-o", bin, ".")
	if got := lines(run(bin)); got[0] != head+"+dirty" || !strings.Contains(got[2], "revision "+head+" (modified)") {
		t.Fatalf("go build with an untracked file: got %q, want %s+dirty and (modified)", got, head)
	}

	// go run stamps nothing under the default -buildvcs=auto: the revision
	// comes from git in the working directory.
	if got := lines(run("go", "run", "-buildvcs=auto", ".")); got[0] != "" || got[1] != head+"+dirty" || !strings.Contains(got[2], "revision not stamped") {
		t.Fatalf("go run: got %q, want nothing stamped and %s+dirty from git", got, head)
	}
}

// TestCommitDate: the committer date of a revision of this checkout is
// the one git log prints for it, and anything that is not a hex revision
// (Unknown, a dirty suffix, an option) gets "" without running git.
func TestCommitDate(t *testing.T) {
	for _, bad := range []string{Unknown, "", "--all", rev + "+dirty", "HEAD"} {
		if d := CommitDate(bad); d != "" {
			t.Errorf("CommitDate(%q) = %q, want \"\"", bad, d)
		}
	}
	out, err := exec.Command("git", "log", "-1", "--format=%H %cs").Output()
	if err != nil {
		t.Skipf("git log: %v (not a checkout, or no git)", err)
	}
	f := strings.Fields(string(out))
	if d := CommitDate(f[0]); d != f[1] {
		t.Errorf("CommitDate(HEAD's %s) = %q, want %q", f[0], d, f[1])
	}
	if d := CommitDate("0000000000000000000000000000000000000000"); d != "" {
		t.Errorf("CommitDate of no commit = %q, want \"\"", d)
	}
}

// TestNoGitInWorkingDirectory (issue 30, low): from the working directory
// of a hostile checkout, whose core.fsmonitor (and hooks) would run a
// command, the lookup runs nothing of it and still names this package's
// own checkout: every way git could pick up that configuration (the
// repository's config, a worktree's, GIT_DIR-less discovery from a
// subdirectory) is tried.
func TestNoGitInWorkingDirectory(t *testing.T) {
	want, err := exec.Command("git", "-C", SourceDir(), "rev-parse", "HEAD").Output()
	if SourceDir() == "" || err != nil {
		t.Skipf("no source checkout (%q) or no git: %v", SourceDir(), err)
	}
	hostile := t.TempDir()
	marker := filepath.Join(t.TempDir(), "PWNED")
	mustGit := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = hostile
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	mustGit("init", "-q")
	os.WriteFile(filepath.Join(hostile, "f"), []byte("x"), 0o644)
	mustGit("add", "f")
	mustGit("commit", "-q", "-m", "hostile")
	mustGit("config", "core.fsmonitor", "touch "+marker+"; echo")
	os.MkdirAll(filepath.Join(hostile, ".git", "hooks"), 0o755)
	for _, h := range []string{"post-index-change", "reference-transaction", "post-checkout"} {
		os.WriteFile(filepath.Join(hostile, ".git", "hooks", h), []byte("#!/bin/sh\ntouch "+marker+"\n"), 0o755)
	}
	sub := filepath.Join(hostile, "sub", "dir")
	os.MkdirAll(sub, 0o755)
	for _, wd := range []string{hostile, sub} {
		t.Chdir(wd)
		got := lookup()
		if _, err := os.Stat(marker); err == nil {
			t.Fatalf("from %s: the checkout's fsmonitor or a hook ran", wd)
		}
		if !strings.HasPrefix(got, strings.TrimSpace(string(want))) {
			t.Errorf("from %s: lookup() = %q, want this package's checkout %s", wd, got, want)
		}
		if d := CommitDate(strings.TrimSpace(string(want))); !isoDate.MatchString(d) {
			t.Errorf("from %s: CommitDate of the source HEAD = %q", wd, d)
		}
	}
}

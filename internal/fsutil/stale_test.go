package fsutil_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/specsim/specsim/internal/fsutil"
)

// TestMain lets this test binary be the live writer of another process
// (FSUTIL_HOLD_TEMP=dir): it starts an atomic write in dir, prints the
// temporary file's name and holds it open, unfinished, until killed.
func TestMain(m *testing.M) {
	if dir := os.Getenv("FSUTIL_HOLD_TEMP"); dir != "" {
		f, err := fsutil.Create(filepath.Join(dir, "live.parquet"))
		if err != nil {
			fmt.Println("error:", err)
			os.Exit(3)
		}
		f.WriteString("partial")
		fmt.Println(filepath.Base(f.Name()))
		select {}
	}
	os.Exit(m.Run())
}

// Issue 30, H6 and the low "a user file matching the temporary-name
// pattern is deleted": a temporary file is owned by its writer's lock. A
// live writer in another process (whatever its pid namespace or host: the
// lock, not the name, decides) keeps its file through a cleanup; once it
// is killed the kernel drops its lock and the next cleanup removes the
// file. Names that only resemble the pattern, links and directories are
// never touched, and an exact-pattern file nobody holds is removed.
func TestTempFilesAreOwned(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" {
		t.Skip("no flock: nothing is removed there")
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "FSUTIL_HOLD_TEMP="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !fsutil.IsTempName(line[:len(line)-1]) {
		t.Fatalf("the writer said %q, %v", line, err)
	}
	live := line[:len(line)-1]
	h := fsutil.TempHost()
	kept := []string{
		live,
		".notes.tmp-1@" + h + "-backup", // the user's: not the exact pattern
		fmt.Sprintf(".out.parquet.tmp-1@%s-12345", h), // the old pattern's random part
		fmt.Sprintf(".out.parquet.tmp-1@%s-0123456789abcdeF", h),
		"out.parquet.tmp-1@" + h + "-0123456789abcdef", // not hidden
		fmt.Sprintf("..tmp-1@%s-0123456789abcdef", h),  // no base
		".x.tmp-1@a@b-0123456789abcdef",                // two hosts
	}
	removed := []string{
		fmt.Sprintf(".out.parquet.tmp-1@%s-0123456789abcdef", h),     // a killed writer's (no lock held)
		".cell-000003.parquet.tmp-999999@othernode-fedcba9876543210", // another host's, its writer gone
		fsutil.TempNameFor("report.md"),                              // this process's own name, unlocked
	}
	for _, n := range append(kept[1:], removed...) {
		os.WriteFile(filepath.Join(dir, n), []byte("data"), 0o644)
	}
	link := fsutil.TempNameFor("link")
	os.Symlink(filepath.Join(dir, kept[1]), filepath.Join(dir, link))
	sub := fsutil.TempNameFor("sub")
	os.Mkdir(filepath.Join(dir, sub), 0o755)
	kept = append(kept, link, sub)
	if n := fsutil.RemoveStale(dir); n != len(removed) {
		t.Errorf("RemoveStale removed %d files, want %d", n, len(removed))
	}
	check := func(name string, want bool) {
		t.Helper()
		if _, err := os.Lstat(filepath.Join(dir, name)); (err == nil) != want {
			t.Errorf("%s: present %v, want %v", name, err == nil, want)
		}
	}
	for _, n := range kept {
		check(n, true)
	}
	for _, n := range removed {
		check(n, false)
	}
	// a write into the directory sweeps it too: the live file survives
	fsutil.Resweep()
	if err := fsutil.WriteBytes(filepath.Join(dir, "other.csv"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	check(live, true)
	// the writer killed (SIGKILL: nothing of it runs): its lock is gone
	cmd.Process.Kill()
	cmd.Wait()
	fsutil.Resweep()
	if n := fsutil.RemoveStale(dir); n != 1 {
		t.Errorf("after the writer was killed RemoveStale removed %d files, want 1 (its file)", n)
	}
	check(live, false)
	for _, n := range kept[1:] {
		check(n, true)
	}
}

package fsutil

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// Temporary files are named ".<base>.tmp-<pid>@<host>-<random>": the
// writing process's id and host are in the name, so that a later run on
// the same host can tell the files of a killed run (SIGKILL, a power cut:
// nothing removed them) from those of a run still writing, and remove
// them. The files of other hosts (the shards of a Slurm array share a
// directory) are never touched: their process ids mean nothing here.

// host is this machine's name as it appears in temporary file names.
var host = func() string {
	h, err := os.Hostname()
	if err != nil || h == "" {
		return "unknown"
	}
	return strings.NewReplacer("/", "_", "@", "_", "-", "_").Replace(h)
}()

// tempPattern is the os.CreateTemp pattern of a temporary file for path.
func tempPattern(path string) string {
	return "." + filepath.Base(path) + ".tmp-" + strconv.Itoa(os.Getpid()) + "@" + host + "-*"
}

// createTemp creates the temporary file of an atomic write of path, after
// removing the temporary files that killed runs left in path's directory
// (once per directory and process).
func createTemp(path string) (*os.File, error) {
	dir := filepath.Dir(path)
	RemoveStale(dir)
	return os.CreateTemp(dir, tempPattern(path))
}

// cleaned holds the directories RemoveStale has swept in this process.
var cleaned sync.Map

// RemoveStale removes from dir the temporary files of atomic writes
// whose writing process on this host is gone (their name holds its id and
// host, and no process here has that id), and reports how many it
// removed. A file of a process still alive, of another host, or of a name
// it cannot read a process id from, is kept. Each directory is swept once
// per process; later calls return 0.
func RemoveStale(dir string) int {
	abs, err := filepath.Abs(dir)
	if err != nil {
		abs = dir
	}
	if _, done := cleaned.LoadOrStore(abs, true); done {
		return 0
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range ents {
		pid, ok := tempPID(e.Name())
		if !ok || !e.Type().IsRegular() || pid == os.Getpid() || processAlive(pid) {
			continue
		}
		if os.Remove(filepath.Join(dir, e.Name())) == nil {
			n++
		}
	}
	return n
}

// tempPID returns the process id in a temporary file's name
// ".<base>.tmp-<pid>@<host>-<random>" written on this host.
func tempPID(name string) (int, bool) {
	if !strings.HasPrefix(name, ".") {
		return 0, false
	}
	i := strings.LastIndex(name, ".tmp-")
	if i < 0 {
		return 0, false
	}
	p, rest, ok := strings.Cut(name[i+len(".tmp-"):], "@")
	if !ok {
		return 0, false
	}
	j := strings.LastIndexByte(rest, '-')
	if j < 0 || rest[:j] != host {
		return 0, false
	}
	pid, err := strconv.Atoi(p)
	if err != nil || pid <= 0 {
		return 0, false
	}
	return pid, true
}

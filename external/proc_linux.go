package external

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// parentDeathSignal asks the kernel to send the child SIGTERM when the
// harness dies, however it dies (the wrapper shell then kills its group).
func parentDeathSignal(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGTERM }

// prSetChildSubreaper is prctl's PR_SET_CHILD_SUBREAPER (linux/prctl.h).
const prSetChildSubreaper = 36

var subreaperOnce sync.Once

// becomeSubreaper makes the harness the subreaper of its descendants
// (once per process): a process the implementation detaches with setsid,
// whose parent then exits, is reparented to the harness instead of to
// init, so killDescendants still finds it below the harness.
func becomeSubreaper() {
	subreaperOnce.Do(func() {
		_, _, _ = syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0)
	})
}

// killDescendants kills, with SIGKILL, every live process below the
// harness whose environment carries mark (the implementation's marker
// variable, which every process it starts inherits): those that left its
// process group (setsid, setpgid) included, which killGroup cannot reach.
// It scans until a pass finds none (a process may fork between scans, at
// most a few rounds) and reaps the ones reparented to the harness.
func killDescendants(mark string, shell int) {
	self := os.Getpid()
	for round := 0; round < 8; round++ {
		pids := markedDescendants(self, mark)
		if len(pids) == 0 {
			return
		}
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		for _, pid := range pids {
			if pid != shell { // the shell is reaped by its exec.Cmd's Wait
				reap(pid)
			}
		}
	}
}

// reap waits up to 100 ms for pid, killed, to exit and reaps it when it
// is a child of the harness (an orphan reparented to it); for another's
// child Wait4 fails at once with ECHILD, which is fine.
func reap(pid int) {
	var ws syscall.WaitStatus
	for i := 0; i < 100; i++ {
		got, err := syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
		if got == pid || err != nil {
			return
		}
		time.Sleep(time.Millisecond)
	}
}

// markedDescendants returns the live processes below root (by /proc's
// parent links) whose environment holds mark.
func markedDescendants(root int, mark string) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	parent := map[int]int{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ppid, ok := liveParent(pid); ok {
			parent[pid] = ppid
		}
	}
	var out []int
	for pid := range parent {
		if below(pid, root, parent) && hasEnv(pid, mark) {
			out = append(out, pid)
		}
	}
	return out
}

// liveParent returns the parent of pid from /proc/PID/stat, and false for
// a process that is gone or a zombie.
func liveParent(pid int) (int, bool) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 2 || f[0] == "Z" || f[0] == "X" {
		return 0, false
	}
	ppid, err := strconv.Atoi(f[1])
	return ppid, err == nil
}

// below reports whether pid descends from root in the parent map.
func below(pid, root int, parent map[int]int) bool {
	for i := 0; i < 4096; i++ {
		pp, ok := parent[pid]
		if !ok || pp == 0 {
			return false
		}
		if pp == root {
			return true
		}
		pid = pp
	}
	return false
}

// hasEnv reports whether process pid's environment holds the entry mark.
func hasEnv(pid int, mark string) bool {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "environ"))
	if err != nil {
		return false
	}
	for _, kv := range bytes.Split(b, []byte{0}) {
		if string(kv) == mark {
			return true
		}
	}
	return false
}

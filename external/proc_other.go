//go:build !linux

package external

import "syscall"

// parentDeathSignal does nothing where the kernel has no parent-death
// signal: the child then ends on its stdin's end of file.
func parentDeathSignal(*syscall.SysProcAttr) {}

// becomeSubreaper does nothing where the kernel has no child subreaper:
// there a process the implementation detaches from its process group
// (setsid) is not found by killDescendants.
func becomeSubreaper() {}

// killDescendants does nothing here: without /proc's parent links and
// environments the harness reaches the implementation's process group
// only (killGroup).
func killDescendants(string, int) {}

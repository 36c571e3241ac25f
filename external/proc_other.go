//go:build !linux

package external

import "syscall"

// parentDeathSignal does nothing where the kernel has no parent-death
// signal: the child then ends on its stdin's end of file.
func parentDeathSignal(*syscall.SysProcAttr) {}

package external

import "syscall"

// parentDeathSignal asks the kernel to send the child SIGTERM when the
// harness dies, however it dies (the wrapper shell then kills its group).
func parentDeathSignal(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGTERM }

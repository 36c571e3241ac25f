//go:build unix

package report

import (
	"os/exec"
	"syscall"
)

// setGroup runs cmd in its own process group and makes its context's
// cancellation kill the whole group (latexmk, pdflatex and bibtex).
func setGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}

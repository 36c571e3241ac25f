//go:build !unix

package report

import "os/exec"

// setGroup leaves cmd as it is where there are no process groups (the
// context's cancellation kills latexmk alone).
func setGroup(*exec.Cmd) {}

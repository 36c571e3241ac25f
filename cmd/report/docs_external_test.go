package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	simcli "github.com/specsim/specsim/cli"
)

// externalSmall is the --trials the docs test gives the commands of
// docs/external.md's first block, whatever they show. The batch stays as
// shown: a smaller one would hide a command that exceeds --mem-budget.
var externalSmall = map[string]string{"--trials": "1024"}

// runExternal runs the commands of docs/external.md's first shell block
// (the one before its first section) as a user on a fresh clone would,
// in-process and from the repository root, with python/ on PYTHONPATH, at
// externalSmall's sizes: each must exit with the status it shows (0: a
// lossless example sampler is not_detected). 'go build' and 'export'
// lines are what the test does itself; python3 becomes a Python that
// imports NumPy, and the subtest skips, saying so, where there is none.
func runExternal(t *testing.T, r *repo, d *doc) {
	py := numpyPython()
	if py == "" {
		t.Skip("no Python with numpy (tried $SPECSIM_PYTHON, /usr/bin/python3, python3); apt-get install python3-numpy to run docs/external.md's commands")
	}
	var first *block
	for i := range d.blocks {
		if isShell(d.blocks[i].lang) && d.blocks[i].section == "" {
			first = &d.blocks[i]
			break
		}
	}
	if first == nil {
		t.Fatal("docs/external.md has no shell block before its first section")
	}
	t.Chdir(r.root)
	t.Setenv("PYTHONPATH", filepath.Join(r.root, "python"))
	n := 0
	for _, l := range first.logicalLines() {
		for _, c := range splitCommands(l.text, first.line+l.index) {
			if c.words[0] == "export" || len(c.words) > 1 && c.words[0] == "go" && c.words[1] == "build" {
				continue
			}
			prog, i := program(c.words)
			if prog != "simulate" {
				t.Fatalf("docs/external.md:%d: the first block runs simulate only (and go build, export), not %q", c.line, c.words[0])
			}
			args := []string{"simulate"}
			set := map[string]bool{}
			for k := i; k < len(c.words); k++ {
				w := c.words[k]
				if prev := c.words[k-1]; k > i && prev == "--external" && strings.HasPrefix(w, "python3 ") {
					w = py + strings.TrimPrefix(w, "python3")
				} else if v, ok := externalSmall[prev]; k > i && ok {
					w, set[prev] = v, true
				}
				args = append(args, w)
			}
			for _, f := range []string{"--trials"} {
				if !set[f] {
					args = append(args, f, externalSmall[f])
				}
			}
			var stdout, stderr bytes.Buffer
			code := simcli.Run(&stdout, &stderr, args)
			n++
			if code != c.exit {
				t.Errorf("docs/external.md:%d: %s (run as %s): exit %d, the doc shows %d\nstderr:\n%s", c.line, strings.Join(c.words, " "), strings.Join(args, " "), code, c.exit, stderr.String())
			}
		}
	}
	if n < 4 {
		t.Errorf("ran only %d commands of docs/external.md's first block; the test has lost them", n)
	}
}

// numpyPython returns a Python that imports numpy, in the order
// external's tests try them ($SPECSIM_PYTHON, /usr/bin/python3, python3),
// or "".
func numpyPython() string {
	for _, c := range []string{os.Getenv("SPECSIM_PYTHON"), "/usr/bin/python3", "python3"} {
		if c != "" && exec.Command(c, "-c", "import numpy").Run() == nil {
			return c
		}
	}
	return ""
}

// docNamed returns the document whose file name is name.
func docNamed(t *testing.T, docs []*doc, name string) *doc {
	t.Helper()
	for _, d := range docs {
		if filepath.Base(d.path) == name {
			return d
		}
	}
	t.Fatalf("no document %s", name)
	return nil
}

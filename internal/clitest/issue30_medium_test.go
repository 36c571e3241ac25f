package clitest

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unicode"
)

// Issue 30's medium and low findings (M1-M9 and the lows of the
// "medium" branch), each with its row here, and for each class a
// generator of neighbours: name alphabets, numeric extremes for flags,
// report targets, protocol values and signal timings.

// fakeImpl builds the external package's test binary once: with
// SPECSIM_FAKE=token it serves the protocol as a correct verify-mode
// implementation (external/fake_test.go), named by SPECSIM_FAKE_NAME.
var fakeImpl = sync.OnceValues(func() (string, error) {
	out := filepath.Join(filepath.Dir(bin.simulate), "fakeimpl")
	cmd := exec.Command("go", "test", "-c", "-o", out, "../../external")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go test -c ../../external: %v\n%s", err, b)
	}
	return out, nil
})

// fakeCommand is the --external command line of the fake with behaviour
// b, calling itself name (any string: it travels as JSON), with extra
// environment entries env ("K=V").
func fakeCommand(t *testing.T, b, name string, env ...string) string {
	t.Helper()
	exe, err := fakeImpl()
	if err != nil {
		t.Fatal(err)
	}
	js, _ := json.Marshal(name)
	env = append(env, "SPECSIM_FAKE="+b, "SPECSIM_FAKE_NAME="+string(js))
	var q []string
	for _, e := range env {
		q = append(q, shellQuote(e))
	}
	return "exec env " + strings.Join(q, " ") + " " + shellQuote(exe)
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// smallCheck is a check of the fake that takes about a second.
func smallCheck(ext string, extra ...string) []string {
	return append([]string{bin.simulate, "check", "--external", ext, "--source", "dirichlet:V=8,contexts=2", "--gamma", "2",
		"--trials", "2000", "--batch", "500", "--seed", "1"}, extra...)
}

// hostileNames is the name alphabet (M1): every character class a
// terminal or a line-reading script acts on, alone and before a forged
// verdict line, and a very long name.
func hostileNames() []string {
	atoms := []string{"\n", "\r", "\r\n", "\x00", "\x1b[2J\x1b[H", "\x1b]0;title\x07", "\x7f", "\u0085", "\u009b", "\u202e", "\u2066", "\u2028", "\x0b\x0c", "\x08"}
	var out []string
	for _, a := range atoms {
		out = append(out, "m:f"+a+"verdict: not_detected (Holm-adjusted p = 1)")
	}
	return append(out, strings.Repeat("\nverdict: violated", 5000))
}

// TestHostileNames (M1): an implementation named with any character of
// the alphabet gets exactly the lines a plainly named one gets, one
// "verdict:" line among them, nothing a terminal acts on, and --json keeps
// the exact name.
func TestHostileNames(t *testing.T) {
	t.Parallel() // after the timing-sensitive serial tests (TestInterrupt), beside the others
	clean := run(t, t.TempDir(), bin.simulate, smallCheck(fakeCommand(t, "token", "plain:name"))[1:]...)
	if clean.code != exitOK {
		t.Fatalf("a plainly named fake: exit %d: %s", clean.code, clean.stderr)
	}
	want := len(strings.Split(clean.stdout, "\n"))
	for i, name := range hostileNames() {
		t.Run(strconv.Itoa(i), func(t *testing.T) {
			cmd := smallCheck(fakeCommand(t, "token", name))
			r := run(t, t.TempDir(), cmd[0], cmd[1:]...)
			checkResult(t, cmd, r, []int{exitOK}, false)
			lines := strings.Split(r.stdout, "\n")
			verdicts := 0
			for _, l := range lines {
				if strings.HasPrefix(l, "verdict:") {
					verdicts++
				}
			}
			if len(lines) != want || verdicts != 1 {
				t.Errorf("name %.30q: %d lines (%d verdict lines), want %d and 1:\n%s", name, len(lines), verdicts, want, firstLines(r.stdout, 4))
			}
			for _, out := range []string{r.stdout, r.stderr} {
				for _, c := range out {
					if c != '\n' && c != '\t' && (unicode.IsControl(c) || c >= 0x2066 && c <= 0x2069 || c >= 0x202a && c <= 0x202e || c == 0x2028) {
						t.Errorf("name %.30q: %U reached the terminal", name, c)
						break
					}
				}
			}
			if i%4 != 0 {
				return // --json for every 4th name: the round trip is one property
			}
			js := run(t, t.TempDir(), cmd[0], append(cmd[1:], "--json")...)
			var rep struct {
				Implementation string `json:"implementation"`
			}
			if err := json.Unmarshal([]byte(js.stdout), &rep); err != nil || rep.Implementation != name {
				t.Errorf("--json: %v; implementation %.40q, want %.40q", err, rep.Implementation, name)
			}
		})
	}
}

// TestHostile30Medium holds a row per medium and low finding of issue 30
// owned here, each a family of neighbours, with the contract of
// TestHostile (exit code, one stderr line, no panic, peak memory) and a
// bound on time: what is refused is refused before any work.
func TestHostile30Medium(t *testing.T) {
	d := t.TempDir()
	S := bin.simulate
	fifo := filepath.Join(d, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	fifoFile := filepath.Join(d, "withfifo")
	os.MkdirAll(fifoFile, 0o755)
	syscall.Mkfifo(filepath.Join(fifoFile, "check.md"), 0o644)
	dirFile := filepath.Join(d, "withdir")
	os.MkdirAll(filepath.Join(dirFile, "check-profile.png"), 0o755)
	deep := filepath.Join(d, "deep.toml")
	writeDeepSpec(t, deep, 4<<20, 31)
	bigName := filepath.Join(d, "bigname.toml")
	os.WriteFile(bigName, []byte("experiment = \""+strings.Repeat("x", 2_000_000)+"\"\n"), 0o644)
	long := []string{"--source", "dirichlet:V=8", "--trials", "100000000", "--seed", "1"} // minutes if it ran
	type row struct {
		name  string
		cmd   []string
		codes []int
		wall  time.Duration
		check func(r result) string
	}
	oneLineHas := func(s string) func(r result) string {
		return func(r result) string {
			if !strings.Contains(r.stderr, s) {
				return "stderr lacks " + strconv.Quote(s) + ": " + firstLines(r.stderr, 2)
			}
			return ""
		}
	}
	var rows []row
	// M3: a report target that cannot be written is exit 2 before the check
	for _, target := range []string{fifo, "/dev/null", "/proc/1/report", filepath.Join(fifo, "sub"), fifoFile, dirFile} {
		rows = append(rows, row{"M3 check --report " + target, append([]string{S, "check", "--report", target}, long...), []int{exitUsage}, 3 * time.Second, oneLineHas("--report")})
	}
	// M6: TVs past the trial cap are said to be, the count and cap named
	for _, tv := range []string{"1e-6", "1e-9", "5e-324"} {
		rows = append(rows, row{"M6 plan --tv " + tv, []string{S, "plan", "--tv", tv, "--source", "dirichlet:V=16", "--seed", "1"}, []int{exitOK}, 15 * time.Second,
			func(r result) string {
				if !strings.Contains(r.stdout, "trials, more than the 1e+12 a check accepts") {
					return "stdout does not say the count exceeds the cap: " + r.stdout
				}
				return ""
			}})
	}
	// M7: a 4 MiB spec of 31-part table headers
	rows = append(rows, row{"M7 a 4 MiB spec of 31-part headers", []string{S, "run", deep, "--out", filepath.Join(d, "deep-out")}, []int{exitUsage}, 2 * time.Second, oneLineHas("more than 4096 keys")})
	// M8: the protocol field, validated exactly
	for i, v := range []string{`"2"`, `null`, `0`, `-1`, `1.5`, `[1]`} {
		impl := filepath.Join(d, "proto"+strconv.Itoa(i)+".sh")
		os.WriteFile(impl, []byte("#!/bin/sh\nread -r hello\nprintf '%s\\n' '{\"op\":\"ready\",\"name\":\"p\",\"protocol\":"+v+"}'\nsleep 5\n"), 0o755)
		rows = append(rows, row{"M8 protocol " + v, []string{S, "check", "--external", impl, "--source", "dirichlet:V=8", "--seed", "1"}, []int{exitError}, 3 * time.Second, oneLineHas(`"protocol" field is ` + v)})
	}
	// lows: --mem-budget that rounds to no byte, --timeout not positive,
	// an error line echoing 2 MB
	for _, b := range []string{"1e-10", "9e-10", "0", "-1", "NaN", "-Inf"} {
		rows = append(rows, row{"--mem-budget " + b, append([]string{S, "--mem-budget", b, "check"}, long...), []int{exitUsage}, 2 * time.Second, oneLineHas("--mem-budget")})
	}
	for _, to := range []string{"0s", "-5s", "0", "-1ns"} {
		rows = append(rows, row{"--timeout " + to, append([]string{S, "check", "--external", "true", "--timeout=" + to}, long...), []int{exitUsage}, 2 * time.Second, oneLineHas("--timeout")})
	}
	rows = append(rows, row{"an error echoing a 2 MB field", []string{S, "run", bigName, "--out", filepath.Join(d, "big-out")}, []int{exitUsage}, 3 * time.Second,
		func(r result) string {
			if len(r.stderr) > 4096 || !strings.Contains(r.stderr, "bytes left out] …") {
				return fmt.Sprintf("stderr of %d bytes: %.200s", len(r.stderr), r.stderr)
			}
			return ""
		}})
	for _, c := range rows {
		t.Run(c.name, func(t *testing.T) {
			r := run(t, d, c.cmd[0], c.cmd[1:]...)
			checkResult(t, c.cmd, r, c.codes, false)
			if r.wall > c.wall+loadAllowance {
				t.Errorf("%q: took %v, want under %v", c.cmd[1:], r.wall, c.wall+loadAllowance)
			}
			if msg := c.check(r); msg != "" {
				t.Errorf("%q: %s", c.cmd[1:], msg)
			}
		})
	}
}

// writeDeepSpec writes a spec of about size bytes of table headers each
// parts parts deep, all distinct.
func writeDeepSpec(t *testing.T, path string, size, parts int) {
	t.Helper()
	var b strings.Builder
	b.WriteString("experiment = \"verify\"\n")
	var tail []string
	for j := 1; j < parts; j++ {
		tail = append(tail, "k"+strconv.Itoa(j))
	}
	suffix := "." + strings.Join(tail, ".") + "]\n"
	for i := 0; b.Len() < size-200; i++ {
		b.WriteString("[t" + strconv.Itoa(i) + suffix)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestImplementationLeftovers (M4, M5): an implementation that does not
// exit after the close message keeps its verdict (exit 0, a note), its
// group killed within the close grace; helpers it detached with setsid in
// each of several ways do not outlive the check.
func TestImplementationLeftovers(t *testing.T) {
	d := t.TempDir()
	cmd := smallCheck(fakeCommand(t, "linger", "linger"))
	r := run(t, d, cmd[0], cmd[1:]...)
	checkResult(t, cmd, r, []int{exitOK}, false)
	if !strings.Contains(r.stdout, "verdict: not_detected") || !strings.Contains(r.stdout, "did not exit within 2s of the close message") {
		t.Errorf("a lingering implementation: stdout %s", firstLines(r.stdout, 12))
	}
	for i, shape := range []string{
		"setsid sh -c 'echo $$ > %[1]s; exec sleep 600' &",
		"setsid -f sh -c 'echo $$ > %[1]s; exec sleep 600'",
		"( setsid sh -c 'echo $$ > %[1]s; exec sleep 600' & )",
	} {
		pidFile := filepath.Join(d, "helper"+strconv.Itoa(i))
		cmd := smallCheck(fmt.Sprintf(shape, shellQuote(pidFile)) + "\n" + fakeCommand(t, "token", "detacher"))
		r := run(t, d, cmd[0], cmd[1:]...)
		checkResult(t, cmd, r, []int{exitOK}, false)
		b, err := os.ReadFile(pidFile)
		pid, perr := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || perr != nil {
			t.Fatalf("shape %d: no helper pid: %v %v", i, err, perr)
		}
		for deadline := time.Now().Add(3 * time.Second); running(pid) && time.Now().Before(deadline); {
			time.Sleep(20 * time.Millisecond)
		}
		if running(pid) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Errorf("shape %q: the detached helper %d outlived the check", shape, pid)
		}
	}
}

// running reports whether process pid runs (not gone, not a zombie).
func running(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	return len(f) > 0 && f[0] != "Z" && f[0] != "X"
}

// TestInterrupt30Medium: signal timings. SIGINT or SIGTERM at several
// offsets during 'slurm --submit' (M9) stops it with exit 4 within the
// Ctrl-C bound, sbatch and the child it started killed; SIGINT into a
// tree check of depth 5 or 7 stops it within the bound with the finished
// trials reported; a signal at
// several offsets into an implementation's close wait (M4) ends the wait
// at once and keeps the verdict and its exit code.
func TestInterrupt30Medium(t *testing.T) {
	d := t.TempDir()
	for i, tm := range []struct {
		sig   syscall.Signal
		after time.Duration
	}{{syscall.SIGINT, 300 * time.Millisecond}, {syscall.SIGINT, time.Second}, {syscall.SIGTERM, 600 * time.Millisecond}} {
		pids := filepath.Join(d, "sbatch"+strconv.Itoa(i))
		sb := filepath.Join(d, "sbatch"+strconv.Itoa(i)+".sh")
		os.WriteFile(sb, []byte("#!/bin/sh\necho $$ > "+shellQuote(pids)+"\nsleep 600 &\necho $! >> "+shellQuote(pids)+"\nwait\n"), 0o755)
		cmd := exec.Command(bin.simulate, "slurm", "leviathan-table1", "--shards", "2", "--out", filepath.Join(d, "out"+strconv.Itoa(i)), "--seed", "1", "--submit", "--sbatch", sb)
		code, wall := signalAfter(t, cmd, func() bool { return len(readPIDs(pids)) == 2 }, tm.sig, tm.after)
		if code != exitInterrupted || wall > stopWithin+loadAllowance {
			t.Errorf("slurm --submit, %v after %v: exit %d after %v; want %d within %v", tm.sig, tm.after, code, wall, exitInterrupted, stopWithin+loadAllowance)
		}
		time.Sleep(100 * time.Millisecond)
		for _, pid := range readPIDs(pids) {
			if running(pid) {
				syscall.Kill(pid, syscall.SIGKILL)
				t.Errorf("slurm --submit, %v after %v: process %d (sbatch or its child) outlived it", tm.sig, tm.after, pid)
			}
		}
	}
	// tree checks of growing depth: the dependence test's jb^(γ+1) cells
	// took the report past the watchdog at γ = 7 (2 s, report lost); the
	// cells follow the planned trials, not the finished ones, so one worker
	// (one core while the signal waits) builds the same report
	for _, g := range []string{"5", "7"} {
		for _, after := range []time.Duration{time.Second, 2 * time.Second} {
			cmd := exec.Command(bin.simulate, "check", "--algo", "specinfer", "--gamma", g, "--source", "dirichlet:V=100", "--trials", "100000000", "--seed", "1", "--workers", "1")
			var out strings.Builder
			cmd.Stdout = &out
			code, wall := signalAfter(t, cmd, func() bool { return true }, syscall.SIGINT, after)
			if code != exitInterrupted || wall > stopWithin+loadAllowance || !strings.Contains(out.String(), "verdict: ") {
				t.Errorf("tree check at gamma %s, SIGINT after %v: exit %d after %v, want %d within %v with the finished trials' report:\n%s", g, after, code, wall, exitInterrupted, stopWithin+loadAllowance, firstLines(out.String(), 3))
			}
		}
	}
	for i, after := range []time.Duration{0, 300 * time.Millisecond, time.Second} {
		closed := filepath.Join(d, "closed"+strconv.Itoa(i))
		args := smallCheck(fakeCommand(t, "linger", "linger", "SPECSIM_FAKE_CLOSED="+closed))
		cmd := exec.Command(args[0], args[1:]...)
		var out strings.Builder
		cmd.Stdout = &out
		code, wall := signalAfter(t, cmd, func() bool { _, err := os.Stat(closed); return err == nil }, syscall.SIGTERM, after)
		if code != exitOK || wall > 500*time.Millisecond+loadAllowance || !strings.Contains(out.String(), "verdict: not_detected") ||
			!strings.Contains(out.String(), "interrupted while waiting for it to exit") {
			t.Errorf("SIGTERM %v into the close wait: exit %d after %v; want 0 within %v, the verdict and a note:\n%s", after, code, wall, 500*time.Millisecond+loadAllowance, firstLines(out.String(), 12))
		}
	}
}

// signalAfter starts cmd, waits until ready() (at most 20 s), then
// another after, sends sig, and returns the exit code and the time from
// the signal to the exit.
func signalAfter(t *testing.T, cmd *exec.Cmd, ready func() bool, sig syscall.Signal, after time.Duration) (int, time.Duration) {
	t.Helper()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	for deadline := time.Now().Add(20 * time.Second); !ready(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			<-done
			t.Fatalf("%v: never ready", cmd.Args[1:3])
		}
	}
	time.Sleep(after)
	sent := time.Now()
	cmd.Process.Signal(sig)
	select {
	case <-done:
	case <-time.After(caseTimeout):
		cmd.Process.Kill()
		<-done
	}
	return cmd.ProcessState.ExitCode(), time.Since(sent)
}

// readPIDs reads the pids listed one a line in path.
func readPIDs(path string) []int {
	b, _ := os.ReadFile(path)
	var out []int
	for _, f := range strings.Fields(string(b)) {
		if pid, err := strconv.Atoi(f); err == nil {
			out = append(out, pid)
		}
	}
	return out
}

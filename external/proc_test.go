package external

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/sim/check"
)

// alive reports whether process pid runs (a zombie, killed and waiting to
// be reaped, does not).
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	return len(f) > 0 && f[0] != "Z" && f[0] != "X"
}

// helperPID starts the fake with behaviour b after a helper process of
// its own (sleep, its pid written to a file), as an implementation that
// starts a server would; it returns the command and the pid file.
func helperCommand(t *testing.T, b string) (cmd string, env []string, pidFile string) {
	exe, env := fakeCommand(b)
	pidFile = filepath.Join(t.TempDir(), "helper.pid")
	return "sleep 600 & echo $! > '" + pidFile + "'; " + exe, env, pidFile
}

func readPID(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// Issue 23: a correct implementation that starts a helper process keeps
// its verdict (the helper held the stderr pipe, so the harness waited for
// it and called the run failed), and the helper does not outlive the run.
func TestHelperProcessKeepsVerdict(t *testing.T) {
	t.Parallel()
	cmd, env, pidFile := helperCommand(t, "token")
	start := time.Now()
	rep, err := Run(context.Background(), sim.Source{Spec: "test pool", BlockSource: testPool(t, 50, 3, 4)}, RunConfig{
		Config: Config{Command: cmd, Env: env, Mode: Verify, Timeout: 20 * time.Second},
		Check:  check.Config{Gamma: 3, Trials: 4000, Seed: 5, Batch: 500},
	})
	if err != nil || rep.Verdict != check.NotDetected {
		t.Fatalf("verdict %q, err %v", rep.Verdict, err)
	}
	if d := time.Since(start); d > 15*time.Second {
		t.Errorf("the run took %v: it waited on the helper", d)
	}
	pid := readPID(t, pidFile)
	for deadline := time.Now().Add(5 * time.Second); alive(pid) && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	if alive(pid) {
		t.Errorf("the helper %d outlived the run", pid)
	}
}

// A check interrupted while it waits for an answer stops at once, kills
// the implementation's group, and reports the trials of the batches
// answered before (it reported 0). The implementation answers the hello
// and three batches, then nothing (its replies are cut after those).
func TestInterruptedWaitKeepsTrials(t *testing.T) {
	t.Parallel()
	exe, env := fakeCommand("token")
	// hello reply + 3 batch replies of 16 steps (a header line and a frame
	// of 16×4 int64 each): let those through, then hold the rest
	pidFile := filepath.Join(t.TempDir(), "holder.pid")
	// dd copies byte by byte (head -c would hold the replies in its buffer)
	cmd := exe + " | { dd bs=1 count=" + strconv.Itoa(replyBytes(t, exe, env)) + " 2>/dev/null; echo $$ > '" + pidFile + "'; exec sleep 600; }"
	ctx, cancel := context.WithCancel(context.Background())
	type out struct {
		rep Report
		err error
	}
	done := make(chan out, 1)
	go func() {
		rep, err := Run(ctx, sim.Source{Spec: "test pool", BlockSource: testPool(t, 50, 3, 4)}, RunConfig{
			Config: Config{Command: cmd, Env: env, Mode: Verify, Timeout: time.Minute},
			Check:  check.Config{Gamma: 3, Trials: 1 << 20, Seed: 5, Batch: 16, Workers: 1},
		})
		done <- out{rep, err}
	}()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(pidFile); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the implementation never stalled")
		}
	}
	time.Sleep(200 * time.Millisecond) // the harness is now waiting on batch 3
	cancel()
	sent := time.Now()
	select {
	case o := <-done:
		if d := time.Since(sent); d > time.Second {
			t.Errorf("stopped %v after the cancel", d)
		}
		if !errors.Is(o.err, context.Canceled) {
			t.Errorf("err = %v, want one wrapping context.Canceled", o.err)
		}
		if o.rep.Trials != 48 || !o.rep.Interrupted {
			t.Errorf("report: %d trials, interrupted %v; want the 48 trials of the 3 answered batches", o.rep.Trials, o.rep.Interrupted)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the interrupted check did not return")
	}
	if pid := readPID(t, pidFile); alive(pid) {
		t.Errorf("the stalled implementation %d outlived the run", pid)
	}
}

// replyBytes is the size of the fake's hello and pool replies and its first three
// batch replies of 16 steps at γ = 3: a header line each, and a frame of
// 16×4 int64 per batch.
func replyBytes(t *testing.T, exe string, env []string) int {
	t.Helper()
	hello := len(`{"op":"ready","batch":0,"first_step":0,"seed":0,"arrays":null,"name":"fake:token"}`) + 1
	ok := len(`{"op":"ok","batch":0,"first_step":0,"seed":0,"arrays":null}`) + 1 // the pool's
	n := hello + ok
	for b := range 3 {
		line := len(fmt.Sprintf(`{"op":"result","batch":%d,"first_step":0,"seed":0,"arrays":["emitted"]}`, b)) + 1
		var frame bytes.Buffer
		if _, err := writeI64(&frame, []int{16, 4}, make([]int64, 64), nil); err != nil {
			t.Fatal(err)
		}
		n += line + frame.Len()
	}
	return n
}

// Issue 30 (M5): a helper that leaves the implementation's process group
// does not outlive the run either. Each shape detaches a helper another
// way (setsid in the background, setsid -f whose parent exits at once so
// the helper is an orphan, a subshell that exits after starting it, a
// double fork with a new process group); the helper writes its own pid.
func TestDetachedHelpersKilled(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/proc/self/environ"); err != nil {
		t.Skip("no /proc: the harness reaches the process group only")
	}
	shapes := map[string]string{
		"setsid in the background":         "setsid sh -c 'echo $$ > %[1]s; exec sleep 600' &",
		"setsid -f, orphaned at once":      "setsid -f sh -c 'echo $$ > %[1]s; exec sleep 600'",
		"a subshell that exits":            "( setsid sh -c 'echo $$ > %[1]s; exec sleep 600' & )",
		"a double fork in its own group":   "( sh -c 'set -m; sh -c \"echo \\$\\$ > %[1]s; exec sleep 600\" &' & )",
		"setsid with stdio all redirected": "setsid sh -c 'echo $$ > %[1]s; exec sleep 600' </dev/null >/dev/null 2>&1 &",
	}
	for name, shape := range shapes {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			exe, env := fakeCommand("token")
			pidFile := filepath.Join(t.TempDir(), "helper.pid")
			cmd := fmt.Sprintf(shape, "'"+pidFile+"'") + "\n" + exe
			rep, err := Run(context.Background(), sim.Source{Spec: "test pool", BlockSource: testPool(t, 50, 3, 4)}, RunConfig{
				Config: Config{Command: cmd, Env: env, Mode: Verify, Timeout: 20 * time.Second},
				Check:  check.Config{Gamma: 3, Trials: 2000, Seed: 5, Batch: 500},
			})
			if err != nil || rep.Verdict != check.NotDetected {
				t.Fatalf("verdict %q, err %v", rep.Verdict, err)
			}
			pid := readPID(t, pidFile)
			for deadline := time.Now().Add(5 * time.Second); alive(pid) && time.Now().Before(deadline); {
				time.Sleep(20 * time.Millisecond)
			}
			if alive(pid) {
				syscall.Kill(pid, syscall.SIGKILL)
				t.Errorf("the detached helper %d outlived the run", pid)
			}
		})
	}
}

// Issue 30 (M4): an implementation that does not exit after the close
// message keeps its finished verdict (it was lost, exit 1): the harness
// kills its group after CloseGrace and notes it; a cancellation during
// that wait ends it at once, the verdict still standing.
func TestLingeringImplementationKeepsVerdict(t *testing.T) {
	t.Parallel()
	for _, cancelAfter := range []time.Duration{0, 300 * time.Millisecond} {
		t.Run(fmt.Sprint("cancel after ", cancelAfter), func(t *testing.T) {
			t.Parallel()
			exe, env := fakeCommand("linger")
			closed := filepath.Join(t.TempDir(), "closed") // the fake creates it when the close arrives
			env = append(env, "SPECSIM_FAKE_CLOSED="+closed)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			closing := make(chan time.Time, 1)
			go func() {
				for ctx.Err() == nil {
					if _, err := os.Stat(closed); err == nil {
						closing <- time.Now()
						if cancelAfter > 0 {
							time.AfterFunc(cancelAfter, cancel)
						}
						return
					}
					time.Sleep(5 * time.Millisecond)
				}
			}()
			cfg := RunConfig{
				Config: Config{Command: exe, Env: env, Mode: Verify, Timeout: 20 * time.Second},
				Check:  check.Config{Gamma: 3, Trials: 2000, Seed: 5, Batch: 500},
			}
			rep, err := Run(ctx, sim.Source{Spec: "test pool", BlockSource: testPool(t, 50, 3, 4)}, cfg)
			var took time.Duration
			select {
			case c := <-closing:
				took = time.Since(c)
			default:
				t.Fatal("the close message never arrived")
			}
			if err != nil || rep.Verdict != check.NotDetected || rep.Interrupted {
				t.Fatalf("verdict %q, interrupted %v, err %v; want not_detected", rep.Verdict, rep.Interrupted, err)
			}
			// the limits allow 1.5 s for a loaded machine (internal/clitest's
			// loadAllowance)
			want, limit := "did not exit within 2s of the close message", CloseGrace+1500*time.Millisecond
			if cancelAfter > 0 {
				want, limit = "interrupted while waiting for it to exit", cancelAfter+1500*time.Millisecond
			}
			if !strings.Contains(strings.Join(rep.Notes, "\n"), want) {
				t.Errorf("notes %q lack %q", rep.Notes, want)
			}
			if took > limit {
				t.Errorf("the run ended %v after the close arrived; want under %v", took, limit)
			}
		})
	}
}

// Issue 30 (M8): the ready reply's "protocol" field is validated exactly,
// and a field of the wrong type is named: each value below gets one line
// naming the field (a string got "not a JSON header line"; 0, -1 and
// null were taken as protocol 1).
func TestProtocolFieldValidated(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		`"protocol":"2"`:                    `"protocol" field is "2"; want a whole number from 1 to 2`,
		`"protocol":null`:                   `"protocol" field is null; want`,
		`"protocol":0`:                      `"protocol" field is 0; want`,
		`"protocol":-1`:                     `"protocol" field is -1; want`,
		`"protocol":1.5`:                    `"protocol" field is 1.5; want`,
		`"protocol":2.0`:                    `"protocol" field is 2.0; want`,
		`"protocol":true`:                   `"protocol" field is true; want`,
		`"protocol":[2]`:                    `"protocol" field is [2]; want`,
		`"protocol":{}`:                     `"protocol" field is {}; want`,
		`"protocol":99999999999999999999`:   `"protocol" field is 99999999999999999999; want`,
		`"protocol":3`:                      `speaks protocol 3; the harness speaks 1 to 2`,
		`"protocol":1,"name":5`:             `"name" field is a JSON number; want a JSON string`,
		`"protocol":1,"takes_sampling":"y"`: `"takes_sampling" field is a JSON string; want a JSON boolean`,
	}
	for field, want := range cases {
		t.Run(field, func(t *testing.T) {
			t.Parallel()
			script := filepath.Join(t.TempDir(), "impl.sh")
			os.WriteFile(script, []byte("#!/bin/sh\nread -r hello\nprintf '%s\\n' '{\"op\":\"ready\","+field+"}'\nsleep 5\n"), 0o755)
			_, err := Start(Config{Command: script, Mode: Verify, Gamma: 2, V: 4, Timeout: 10 * time.Second})
			if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("ready {%s}: err %v; want one line holding %q", field, err, want)
			}
		})
	}
}

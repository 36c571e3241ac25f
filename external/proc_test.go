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

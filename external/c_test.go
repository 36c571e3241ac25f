package external

import (
	"bytes"
	"context"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/sim/check"
	"github.com/specsim/specsim/sim/source"
)

// cFlags are the flags the C client must compile cleanly under.
var cFlags = []string{"-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-O2"}

// cExample compiles external/c's example verifier (example_verify.c with
// the client specsim.c) with cc into a temporary directory and returns
// the binary. It skips the test with a message when there is no C
// compiler.
func cExample(t *testing.T) string {
	t.Helper()
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Skip("no C compiler (cc) on PATH; install one (apt-get install gcc) to build and judge the C client's example in external/c")
	}
	dir := filepath.Join(repoRoot(t), "external", "c")
	bin := filepath.Join(t.TempDir(), "example_verify")
	args := append(append([]string{}, cFlags...), "-o", bin, filepath.Join(dir, "example_verify.c"), filepath.Join(dir, "specsim.c"), "-lm")
	if out, err := exec.Command(cc, args...).CombinedOutput(); err != nil {
		t.Fatalf("cc %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return bin
}

// cProbe is a C program on the client: in step mode it emits, for each
// row, one token drawn from the row's first target row and no drafts
// (with_drafts = 0: speculative decoding that accepts nothing, lossless);
// with PROBE_FAIL set its callback fails on batch 1 with a message.
const cProbe = `#include "specsim.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
static int step(const specsim_batch *bt, specsim_reply *r, void *user) {
    int b, y;
    (void)user;
    if (getenv("PROBE_FAIL") != NULL && bt->index == 1) {
        strcpy(r->error, "planted failure in batch 1");
        return 1;
    }
    for (b = 0; b < bt->size; b++) {
        const float *p = specsim_p(bt, b, 0);
        double t = specsim_random(specsim_row_rng(bt, b)), c = 0, sum = 0;
        for (y = 0; y < bt->vocab; y++) sum += exp((double)p[y]);
        t *= sum;
        for (y = 0; y < bt->vocab; y++) {
            c += exp((double)p[y]);
            if (exp((double)p[y]) > 0) r->emitted[b * (bt->gamma + 1)] = y;
            if (c > t && exp((double)p[y]) > 0) break;
        }
    }
    r->with_drafts = 0;
    return 0;
}
int main(void) {
    specsim_impl impl = {0};
    impl.name = "probe";
    impl.verify = step;
    impl.modes = "step";
    return specsim_main(&impl);
}
`

// TestCClientProbe: a sampler that returns emitted alone (with_drafts =
// 0, protocol 2) is judged on its emitted tokens (not detected: it
// emits one token drawn from p, lossless; level 0.01, fixed seed), a
// mode it does not serve is refused at the handshake, a harness of
// protocol 1 is told that emitted alone needs protocol 2, and a callback
// that fails sends its message, which ends the check with one line
// naming the batch.
func TestCClientProbe(t *testing.T) {
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Skip("no C compiler (cc) on PATH; install one (apt-get install gcc) to build the C client")
	}
	dir, tmp := filepath.Join(repoRoot(t), "external", "c"), t.TempDir()
	src, bin := filepath.Join(tmp, "probe.c"), filepath.Join(tmp, "probe")
	if err := os.WriteFile(src, []byte(cProbe), 0o644); err != nil {
		t.Fatal(err)
	}
	args := append(append([]string{}, cFlags...), "-I", dir, "-o", bin, src, filepath.Join(dir, "specsim.c"), "-lm")
	if out, err := exec.Command(cc, args...).CombinedOutput(); err != nil {
		t.Fatalf("cc: %v\n%s", err, out)
	}
	rep, err := cRun(t, bin, Step, "", "", 20000)
	if err != nil || rep.Verdict != check.NotDetected || rep.Edge != check.Passed || rep.Protocol != 2 {
		t.Errorf("emitted alone: %v, verdict %s, edge %s (%s), protocol %d; want not_detected, edge passed, protocol 2", err, rep.Verdict, rep.Edge, rep.EdgeMsg, rep.Protocol)
	}
	if _, err := cRun(t, bin, Verify, "", "", 1000); err == nil || !strings.Contains(err.Error(), "probe does not serve verify mode (it serves step)") {
		t.Errorf("verify mode: %v; want the refusal", err)
	}
	// A harness of protocol 1 takes no step reply without drafts: the
	// client answers with an error message saying so.
	var in bytes.Buffer
	in.WriteString(`{"op":"hello","protocol":1,"mode":"step","gamma":2,"vocab":3}` + "\n" + `{"op":"pool","contexts":1,"arrays":["p","q"]}` + "\n")
	writeF32(&in, []int{1, 3, 3}, make([]float32, 9), nil)
	writeF32(&in, []int{1, 2, 3}, make([]float32, 6), nil)
	in.WriteString(`{"op":"batch","batch":0,"size":1,"seed":1,"rows":"pool","coins":"random","arrays":["ctx"]}` + "\n")
	writeI64(&in, []int{1}, []int64{0}, nil)
	in.WriteString(`{"op":"close"}` + "\n")
	cmd := exec.Command(bin)
	cmd.Stdin = &in
	out, _ := cmd.Output()
	if want := `{"op":"error","batch":0,"arrays":[],"message":"with_drafts = 0 (emitted alone) needs protocol 2; the harness speaks protocol 1"}`; !strings.Contains(string(out), want) {
		t.Errorf("emitted alone under protocol 1: stdout %q; want %q", out, want)
	}
	t.Setenv("PROBE_FAIL", "1")
	_, err = cRun(t, bin, Step, "", "", 20000)
	if err == nil || !strings.Contains(err.Error(), "batch 1 (steps 512..1023)") || !strings.Contains(err.Error(), "planted failure in batch 1") || strings.Contains(err.Error(), "\n") {
		t.Errorf("failing callback: %v; want one line naming batch 1 and the message", err)
	}
}

// cRun checks the C example (with SPECSIM_C_BUG=bug) on a pool.
func cRun(t *testing.T, bin, mode, bug, rows string, trials int64) (Report, error) {
	t.Helper()
	src, err := source.New("dirichlet:V=100,contexts=8", 4, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	cfg := RunConfig{
		Config: Config{Command: "exec '" + bin + "'", Env: append(os.Environ(), "SPECSIM_C_BUG="+bug), Mode: mode, Timeout: time.Minute},
		Check:  check.Config{Gamma: 4, Trials: trials, Seed: 1, Batch: 512},
	}
	if rows != "" {
		if cfg.Rows, err = ParseRows(rows); err != nil {
			t.Fatal(err)
		}
	}
	return Run(context.Background(), src, cfg)
}

// TestCClient compiles the C client (external/c/specsim.c) and its
// example token verifier with cc under -std=c99 -Wall -Wextra -Werror
// -pedantic, and judges it through the protocol on
// dirichlet:V=100,contexts=8 at γ = 4, 20,000 steps in batches of 512:
//
//   - the correct verifier, in verify and step mode and in composed
//     batches (per-row draft lengths 2 and 4, protocol 2's per-row
//     arrays): not detected, edge cases passed. The tests run at level
//     0.01 with Holm's correction, so a correct sampler is called
//     violated with probability at most 0.01; the seed is fixed, so the
//     run is the same every time.
//   - seeded rows that draw from the batch's generator instead of their
//     own seed (specsim_row_rng): the determinism component, which is
//     exact (the first 256 seeded rows sent again in another order and
//     batch must give the same tokens), is violated.
//   - the inclusive comparison u <= p/q: violated by the edge cases,
//     which are exact (a coin of exactly 0 accepts the draft of target
//     probability 0 with certainty), whatever the statistics say.
//   - the correction drawn from p instead of the residual: the first
//     emitted token's law is min(p,q) + (1-α)p instead of p, α = Σ
//     min(p,q), at total-variation distance ½Σ|min(p,q) - αp| from p;
//     averaged over this pool's 8 contexts it is 0.129 (resampleTV
//     computes it from the pool's rows). The "position 1" test bins the
//     tokens into equal-mass bins sorted by p/q; the difference's sign,
//     that of min(1, q/p) - α, is monotone in p/q, so binning mixes signs
//     in at most one bin per context and the binned TV is that TV but
//     for the bin at p/q = 1/α. That test detects a binned TV of 0.037
//     with power 0.9 at its Holm share of the level 0.01 at 20,000 steps
//     (check reports it as min_detectable_tv); the test asserts the
//     bug's TV is at least twice that (it is 3.5 times), so the chosen
//     trial count detects the bug with power above 0.9, and the verdict
//     must be violated (p_holm is 0 at seed 1).
func TestCClient(t *testing.T) {
	t.Parallel() // its own temporary directory and binaries; minute-long timeouts
	bin := cExample(t)
	for _, c := range []struct {
		mode, bug, rows, want, edge string
		det                         string // the determinism component's verdict ("": none)
	}{
		{Verify, "", "", check.NotDetected, check.Passed, ""},
		{Step, "", "", check.NotDetected, check.Passed, ""},
		{Verify, "", "t=1,gamma=2,seeded;t=1", check.NotDetected, check.Passed, check.NotDetected},
		{Step, "", "t=1,gamma=2,seeded;t=1", check.NotDetected, check.Passed, check.NotDetected},
		{Verify, "inclusive", "", check.Violated, check.Violated, ""},
		{Verify, "resample_p", "", check.Violated, check.Passed, ""},
		{Step, "resample_p", "", check.Violated, check.Passed, ""},
		{Verify, "ignore_seed", "t=1,gamma=2,seeded;t=1", check.Violated, check.Passed, check.Violated},
	} {
		t.Run(c.mode+"/"+c.bug+"/"+c.rows, func(t *testing.T) {
			rep, err := cRun(t, bin, c.mode, c.bug, c.rows, 20000)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s %-6s bug %-10s rows %q: %-12s (edge %s, invalid %d) p_holm %.3g, detects %s TV >= %.4f, %.0f steps/s, protocol %d",
				rep.Implementation, c.mode, c.bug, c.rows, rep.Verdict, rep.Edge, rep.Invalid, rep.PValue, rep.MinDetectableQuantity, rep.MinDetectableTV, rep.StepsPerSecond, rep.Protocol)
			if rep.Verdict != c.want || rep.Edge != c.edge {
				t.Errorf("verdict %s, edge %s (%s); want %s, edge %s", rep.Verdict, rep.Edge, rep.EdgeMsg, c.want, c.edge)
			}
			if rep.Protocol != 2 || rep.Invalid != 0 {
				t.Errorf("protocol %d, invalid outcomes %d; want protocol 2, none", rep.Protocol, rep.Invalid)
			}
			det := ""
			for _, comp := range rep.Components {
				if comp.Name == "determinism" {
					det = comp.Verdict
				}
			}
			if det != c.det {
				t.Errorf("determinism component %q; want %q (components %+v)", det, c.det, rep.Components)
			}
			if c.bug == "resample_p" {
				pos1 := -1.0
				for _, x := range rep.Tests {
					if x.Name == "position 1" {
						pos1 = x.MinDetTV
					}
				}
				tv := resampleTV(t)
				t.Logf("the bug's TV at position 1: %.4f; the position 1 test detects %.4f with power %.2g", tv, pos1, rep.Power)
				if pos1 <= 0 || tv < 2*pos1 {
					t.Errorf("the bug's TV %.4f is not twice the position 1 test's detectable TV %.4f: raise the trials", tv, pos1)
				}
			}
		})
	}
}

// resampleTV returns the total-variation distance, averaged over the
// contexts of the test's pool, between the first emitted token's law
// under the resample-from-p bug, min(p,q) + (1-α)p, and p.
func resampleTV(t *testing.T) float64 {
	src, err := source.New("dirichlet:V=100,contexts=8", 4, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	pool, ok := sim.PoolOf(src.BlockSource)
	if !ok {
		t.Fatal("dirichlet: is not a pool")
	}
	var sum float64
	for c := range pool.Contexts {
		p, q := pool.P[c*(pool.Gamma+1)], pool.Q[c*pool.Gamma]
		var alpha, tv float64
		for x := range p {
			alpha += float64(min(p[x], q[x]))
		}
		for x := range p {
			d := float64(min(p[x], q[x])) - alpha*float64(p[x])
			tv += max(d, -d) / 2
		}
		sum += tv
	}
	return sum / float64(pool.Contexts)
}

// TestCClientMalformed feeds the C example malformed input directly: each
// ends it with exit status 1 and one stderr line naming the fault, and
// nothing but protocol messages on its stdout.
func TestCClientMalformed(t *testing.T) {
	bin := cExample(t)
	hello := `{"op":"hello","protocol":2,"protocols":[1,2],"mode":"verify","gamma":2,"vocab":3,"source":"pool"}` + "\n"
	frame := func(f func(w *bytes.Buffer)) string {
		var b bytes.Buffer
		f(&b)
		return b.String()
	}
	pool := `{"op":"pool","contexts":1,"arrays":["p","q"]}` + "\n" + frame(func(w *bytes.Buffer) {
		writeF32(w, []int{1, 3, 3}, make([]float32, 9), nil)
		writeF32(w, []int{1, 2, 3}, make([]float32, 6), nil)
	})
	batch := `{"op":"batch","batch":0,"first_step":0,"size":2,"seed":18446744073709551615,"rows":"pool","coins":"random","arrays":["ctx","drafts"]}` + "\n"
	ctx := frame(func(w *bytes.Buffer) { writeI64(w, []int{2}, []int64{0, 0}, nil) })
	for _, c := range []struct{ name, in, want string }{
		{"not json", "hello there\n", "the header line is not a JSON object"},
		{"empty line", "\n", "the header line is not a JSON object"},
		{"control bytes", `{"op":"a\nb"}` + "\n", `a "a?b" message before the hello`},
		{"no op", `{"mode":"verify"}` + "\n", `the header has no "op"`},
		{"no gamma", `{"op":"hello","mode":"verify","vocab":3}` + "\n", `the header has no "gamma" field`},
		{"tree mode", strings.Replace(hello, "verify", "tree", 1), "tree mode is not served by the C client"},
		{"no close", hello, "the input ended without a close message"},
		{"bad magic", hello + `{"op":"pool","contexts":1,"arrays":["p","q"]}` + "\n" + "NUMPY!!!!!", `array "p" is not a .npy frame`},
		{"bad dtype", hello + `{"op":"pool","contexts":1,"arrays":["p","q"]}` + "\n" + frame(func(w *bytes.Buffer) {
			writeNpyHeader(w, "<i4", []int{1, 3, 3})
			w.Write(make([]byte, 36))
		}), `array "p" has dtype <i4; the protocol sends <f4, <f8 and <i8`},
		{"bad shape", hello + `{"op":"pool","contexts":1,"arrays":["p","q"]}` + "\n" + frame(func(w *bytes.Buffer) {
			writeF32(w, []int{1, 2, 3}, make([]float32, 6), nil)
		}), `array "p" has dimension 1 of length 2, want 3`},
		{"truncated", hello + pool + batch + ctx[:40], "the input ended inside"},
		{"draft out of range", hello + pool + batch + ctx + frame(func(w *bytes.Buffer) { writeI64(w, []int{2, 2}, []int64{0, 1, 2, 3}, nil) }),
			`array "drafts": element 3 = 3 is outside [-1, 2]`},
		{"context out of range", hello + pool + batch + frame(func(w *bytes.Buffer) { writeI64(w, []int{2}, []int64{0, 1}, nil) }),
			`array "ctx": element 1 = 1 is outside [0, 0]`},
		{"batch before pool", hello + batch + ctx, "a batch of pool rows (ctx) before the pool message"},
		{"huge shape", hello + `{"op":"pool","contexts":1,"arrays":["p","q"]}` + "\n" + frame(func(w *bytes.Buffer) {
			writeNpyHeader(w, "<f4", []int{1 << 20, 1 << 20, 3})
		}), `array "p" has more than 1073741824 elements`},
	} {
		cmd := exec.Command(bin)
		cmd.Stdin = strings.NewReader(c.in)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		code := -1
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		msg := strings.TrimSpace(stderr.String())
		if code != 1 || strings.Count(msg, "\n") != 0 || !strings.HasPrefix(msg, "specsim: ") || !strings.Contains(msg, c.want) {
			t.Errorf("%s: exit %d, stderr %q; want exit 1 and one line containing %q", c.name, code, msg, c.want)
		}
		for _, line := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
			if line != "" && !strings.HasPrefix(line, `{"op":"ready"`) && !strings.HasPrefix(line, `{"op":"ok"`) && !strings.HasPrefix(line, `{"op":"error"`) {
				t.Errorf("%s: stdout line %q is not a protocol message", c.name, line)
			}
		}
	}
}

// TestCClientTolerates: a hello with fields the client does not know
// (nested values, string escapes) gets the ready reply at the newest
// protocol both sides speak (2 for a harness of protocol 3, 1 for a
// harness of protocol 1 or one that names none), and the close message
// ends the client with status 0.
func TestCClientTolerates(t *testing.T) {
	bin := cExample(t)
	for _, c := range []struct{ protocol, want string }{{`"protocol":3,"protocols":[1,2,3],`, "2"}, {`"protocol":1,`, "1"}, {"", "1"}} {
		in := `{"op":"hel\u006co", ` + c.protocol + `"mode":"verify","gamma":2,"vocab":3,"x":[1.5e3,-2,{"a":null,"b":[true,false]}],"s":"a\"b\\c\n"}` + "\n" + `{"op":"close"}` + "\n"
		cmd := exec.Command(bin)
		cmd.Stdin = strings.NewReader(in)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		want := `{"op":"ready","protocol":` + c.want + `,"name":"example_verify.c","takes_sampling":false,"arrays":[]}` + "\n"
		if err != nil || string(out) != want {
			t.Errorf("hello with %s: exit %v, stdout %q, stderr %q; want status 0 and %q", c.protocol, err, out, stderr.String(), want)
		}
	}
}

// TestCClientRefuses: what the C client does not serve (tree mode, a
// Markov pair's tables in step mode) is refused at the handshake, and
// the check ends with one line quoting the client's reason.
func TestCClientRefuses(t *testing.T) {
	bin := cExample(t)
	src, err := source.New("markov:V=6,order=1", 3, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	for mode, want := range map[string]string{
		Tree: "tree mode is not served by the C client",
		Step: "step mode on a model pair (the harness ships its tables) is not served by the C client",
	} {
		_, err := Run(context.Background(), src, RunConfig{
			Config: Config{Command: "exec '" + bin + "'", Mode: mode, Timeout: 10 * time.Second},
			Check:  check.Config{Gamma: 3, Trials: 1000, Seed: 1, Batch: 100},
		})
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s mode on a Markov pair: %v; want one line containing %q", mode, err, want)
		}
	}
}

// TestCClientOtherLanguages links the C client into the C++ and Rust
// token verifiers of external/c (engine_verify.cpp: c++ with specsim.o;
// rust_verify.rs: rustc with libspecsim.a, its declarations following
// specsim.h) and judges each in verify mode on the pool of TestCClient:
// not detected, edge cases passed (level 0.01, fixed seed, as there).
// Each language is skipped, with a message, where its compiler is
// missing.
func TestCClientOtherLanguages(t *testing.T) {
	t.Parallel() // its own temporary directory and binaries; minute-long timeouts
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Skip("no C compiler (cc) on PATH; install one (apt-get install gcc) to build the C client")
	}
	dir := filepath.Join(repoRoot(t), "external", "c")
	tmp := t.TempDir()
	obj, lib := filepath.Join(tmp, "specsim.o"), filepath.Join(tmp, "libspecsim.a")
	if out, err := exec.Command(cc, append(append([]string{}, cFlags...), "-c", filepath.Join(dir, "specsim.c"), "-o", obj)...).CombinedOutput(); err != nil {
		t.Fatalf("cc -c specsim.c: %v\n%s", err, out)
	}
	for _, c := range []struct {
		lang, tool, why string
		build           func(tool, bin string) *exec.Cmd
	}{
		{"C++", "c++", "apt-get install g++", func(tool, bin string) *exec.Cmd {
			return exec.Command(tool, "-std=c++17", "-Wall", "-Wextra", "-Werror", "-pedantic", "-O2", "-I", dir, filepath.Join(dir, "engine_verify.cpp"), obj, "-o", bin)
		}},
		{"Rust", "rustc", "install a Rust toolchain", func(tool, bin string) *exec.Cmd {
			ar, err := exec.LookPath("ar")
			if err != nil {
				t.Skip("no ar on PATH to make libspecsim.a (apt-get install binutils)")
			}
			if out, err := exec.Command(ar, "rcs", lib, obj).CombinedOutput(); err != nil {
				t.Fatalf("ar rcs: %v\n%s", err, out)
			}
			return exec.Command(tool, "-O", "--edition", "2021", "-D", "warnings", filepath.Join(dir, "rust_verify.rs"), "-L", tmp, "-l", "static=specsim", "-o", bin)
		}},
	} {
		t.Run(c.lang, func(t *testing.T) {
			tool, err := exec.LookPath(c.tool)
			if err != nil {
				t.Skipf("no %s on PATH (%s) to build the %s example", c.tool, c.why, c.lang)
			}
			bin := filepath.Join(tmp, c.tool+"-verify")
			if out, err := c.build(tool, bin).CombinedOutput(); err != nil {
				t.Fatalf("%s: %v\n%s", c.tool, err, out)
			}
			rep, err := cRun(t, bin, Verify, "", "", 20000)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: %s (edge %s) p_holm %.3g, %.0f steps/s", rep.Implementation, rep.Verdict, rep.Edge, rep.PValue, rep.StepsPerSecond)
			if rep.Verdict != check.NotDetected || rep.Edge != check.Passed || rep.Invalid != 0 {
				t.Errorf("verdict %s, edge %s (%s), invalid %d; want not_detected, edge passed", rep.Verdict, rep.Edge, rep.EdgeMsg, rep.Invalid)
			}
		})
	}
}

// TestCClientMutations records a session of the harness with the C
// example (a pool, composed batches with their per-row arrays, the edge
// cases), keeps its first two batches, and feeds the example 200 random
// mutations of it (bytes changed, deleted or inserted, digits grown,
// the stream cut short; seed fixed): every run ends with status 0 or 1,
// never a signal or a hang, and a failure says why in one stderr line
// "specsim: ...". (Run under -fsanitize=address,undefined by hand, 1,900
// such inputs gave no report.)
func TestCClientMutations(t *testing.T) {
	bin := cExample(t)
	rec := filepath.Join(t.TempDir(), "session.bin")
	src, _ := source.New("dirichlet:V=20,contexts=2", 3, 1, 0)
	rows, _ := ParseRows("t=1,gamma=2,seeded;t=1")
	if _, err := Run(context.Background(), src, RunConfig{
		Config: Config{Command: "tee '" + rec + "' | exec '" + bin + "'", Mode: Verify, Rows: rows, Timeout: time.Minute},
		Check:  check.Config{Gamma: 3, Trials: 1000, Seed: 1, Batch: 300},
	}); err != nil {
		t.Fatal(err)
	}
	session, err := os.ReadFile(rec)
	cut := bytes.Index(session, []byte(`{"op":"batch","batch":2,`))
	if err != nil || cut < 0 {
		t.Fatalf("the recorded session (%d bytes, %v) has no batch 2", len(session), err)
	}
	base := append(session[:cut:cut], `{"op":"close"}`+"\n"...)
	rng := rand.New(rand.NewPCG(1, 2))
	codes := map[int]int{}
	for it := range 200 {
		in := mutate(rng, base)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		cmd := exec.CommandContext(ctx, bin)
		cmd.Stdin = bytes.NewReader(in)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		cancel()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode() // -1: killed by a signal
		} else if err != nil {
			t.Fatal(err)
		}
		codes[code]++
		msg := strings.TrimSpace(stderr.String())
		if code != 0 && code != 1 || strings.Contains(msg, "\n") || code == 1 && !strings.HasPrefix(msg, "specsim: ") {
			t.Errorf("mutation %d: exit %d, stderr %q; want exit 0 or 1 and at most one line", it, code, msg)
		}
	}
	t.Logf("exit statuses of 200 mutated sessions: %v", codes)
	if codes[1] < 100 {
		t.Errorf("only %d of 200 mutations were refused; the mutations miss the protocol", codes[1])
	}
}

// mutate returns a copy of b with 1 to 6 random edits, cut short 3 times
// in 10.
func mutate(rng *rand.Rand, b []byte) []byte {
	out := bytes.Clone(b)
	for range 1 + rng.IntN(6) {
		i := rng.IntN(len(out))
		switch k := rng.Float64(); {
		case k < 0.5:
			out[i] = byte(rng.IntN(256))
		case k < 0.7:
			out = append(out[:i], out[min(len(out), i+1+rng.IntN(50)):]...)
		case k < 0.85:
			ins := make([]byte, 1+rng.IntN(8))
			for j := range ins {
				ins[j] = byte(rng.IntN(256))
			}
			out = append(out[:i], append(ins, out[i:]...)...)
		default:
			if j := bytes.IndexByte(out[i:], '"'); j >= 0 {
				out = append(out[:i+j], append([]byte("9999999999"), out[i+j:]...)...)
			}
		}
		if len(out) == 0 {
			return out
		}
	}
	if rng.Float64() < 0.3 {
		out = out[:rng.IntN(len(out))]
	}
	return out
}

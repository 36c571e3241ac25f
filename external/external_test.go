package external

import (
	"bufio"
	"bytes"
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/sim/check"
	"github.com/specsim/specsim/sim/source"
)

func TestNpyRoundTrip(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	f := []float32{1, -2.5, 0, 3e-8, 7, 8}
	i := []int64{-1, 0, 1 << 40, 5}
	if _, err := writeF32(&buf, []int{2, 3}, f, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := writeI64(&buf, []int{4}, i, nil); err != nil {
		t.Fatal(err)
	}
	// NumPy's reader needs the data offset aligned; ours pads to 64.
	hl := int(buf.Bytes()[8]) | int(buf.Bytes()[9])<<8
	if (10+hl)%npyAlign != 0 {
		t.Errorf("header length %d: data offset %d is not a multiple of %d", hl, 10+hl, npyAlign)
	}
	r := bufio.NewReader(&buf)
	var a, b array
	if _, err := readNpy(r, &a, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := readNpy(r, &b, nil); err != nil {
		t.Fatal(err)
	}
	if a.Descr != "<f4" || len(a.Shape) != 2 || a.Shape[0] != 2 || a.Shape[1] != 3 {
		t.Fatalf("float frame decoded as %s %v", a.Descr, a.Shape)
	}
	for k := range f {
		if a.F32[k] != f[k] {
			t.Errorf("f32[%d] = %v, want %v", k, a.F32[k], f[k])
		}
	}
	if b.Descr != "<i8" || len(b.Shape) != 1 || b.Shape[0] != 4 {
		t.Fatalf("int frame decoded as %s %v", b.Descr, b.Shape)
	}
	for k := range i {
		if b.I64[k] != i[k] {
			t.Errorf("i64[%d] = %v, want %v", k, b.I64[k], i[k])
		}
	}
}

// TestNpyNumpyHeaders parses headers exactly as numpy.lib.format writes
// them (numpy 1.24: np.save of np.zeros((2, 3), '<i4'), of a 1-d array
// and of a 0-d array).
func TestNpyNumpyHeaders(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		h     string
		descr string
		shape []int
		f     bool
	}{
		{"{'descr': '<i4', 'fortran_order': False, 'shape': (2, 3), }", "<i4", []int{2, 3}, false},
		{"{'descr': '<f2', 'fortran_order': True, 'shape': (7,), }", "<f2", []int{7}, true},
		{"{'descr': '|b1', 'fortran_order': False, 'shape': (), }", "|b1", nil, false},
	} {
		d, f, s, err := parseNpyHeader(c.h)
		if err != nil || d != c.descr || f != c.f || len(s) != len(c.shape) {
			t.Errorf("%s: got %q %v %v %v", c.h, d, f, s, err)
			continue
		}
		for k := range s {
			if s[k] != c.shape[k] {
				t.Errorf("%s: shape %v", c.h, s)
			}
		}
	}
	for _, bad := range []string{"", "{'descr': '<i8'}", "{'descr': '<i8', 'fortran_order': False, 'shape': (2, x), }"} {
		if _, _, _, err := parseNpyHeader(bad); err == nil {
			t.Errorf("%q parsed without error", bad)
		}
	}
	if _, _, err := dtypeOf(">i8"); err == nil {
		t.Error("big-endian dtype accepted")
	}
	// binary16: 1.0 = 0x3C00, -2 = 0xC000, 2^-24 (smallest subnormal) = 0x0001.
	for _, c := range []struct {
		h uint16
		f float32
	}{{0x3C00, 1}, {0xC000, -2}, {0x0001, 1.0 / (1 << 24)}, {0x7BFF, 65504}} {
		if got := half(c.h); got != c.f {
			t.Errorf("half(%#x) = %v, want %v", c.h, got, c.f)
		}
	}
}

func TestDecodeRow(t *testing.T) {
	t.Parallel()
	drafts := []int64{4, 5, 6}
	for _, c := range []struct {
		row   []int64
		gamma int
		want  sim.Outcome
		inv   string
		err   string
	}{
		{[]int64{7, -1, -1, -1}, 3, sim.Outcome{Accepted: 0, Next: 7}, "", ""},
		{[]int64{4, 5, 9, -1}, 3, sim.Outcome{Accepted: 2, Next: 9}, "", ""},
		{[]int64{4, 5, 6, 1}, 3, sim.Outcome{Accepted: 3, Next: 1}, "", ""},
		{[]int64{4, 6, 9, -1}, 3, sim.Outcome{Accepted: 2, Next: 9}, invChanged, ""},
		{[]int64{4, 5, 9, -1}, 1, sim.Outcome{Accepted: 2, Next: 9}, invTooLong, ""},
		{[]int64{4, 9, -1, -1}, 1, sim.Outcome{Accepted: 1, Next: 9}, "", ""},
		{[]int64{4, -1, 9, -1}, 3, sim.Outcome{}, "", "follows -1 padding"},
		{[]int64{-1, -1, -1, -1}, 3, sim.Outcome{}, "", "all -1"},
		{[]int64{10, -1, -1, -1}, 3, sim.Outcome{}, "", "outside the vocabulary"},
		{[]int64{-2, -1, -1, -1}, 3, sim.Outcome{}, "", "outside the vocabulary"},
	} {
		o, inv, err := decodeRow(c.row, drafts, c.gamma, 10)
		switch {
		case c.err == "" && (err != nil || o != c.want || inv != c.inv):
			t.Errorf("%v (gamma %d): got %+v, %q, %v; want %+v, %q", c.row, c.gamma, o, inv, err, c.want, c.inv)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%v: error %v, want one containing %q", c.row, err, c.err)
		}
	}
	// Without drafts (step mode, the drafts not returned) any prefix is
	// the sampler's own.
	if o, inv, err := decodeRow([]int64{1, 2, 3, -1}, nil, 3, 10); err != nil || inv != "" || o != (sim.Outcome{Accepted: 2, Next: 3}) {
		t.Errorf("no drafts: %+v %q %v", o, inv, err)
	}
}

func testPool(t *testing.T, v, gamma, contexts int) *sim.Pool {
	t.Helper()
	src, err := source.New("dirichlet:V="+strconv.Itoa(v)+",contexts="+strconv.Itoa(contexts), gamma, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	pl, _ := sim.PoolOf(src.BlockSource)
	return pl
}

// runFake checks a fake Go implementation on a small pool or pair.
func runFake(t *testing.T, behaviour string, pair bool, timeout time.Duration) (Report, error) {
	return runFakeWith(t, behaviour, pair, timeout, func(*RunConfig) {})
}

// runFakeWith is runFake with the configuration changed by set.
func runFakeWith(t *testing.T, behaviour string, pair bool, timeout time.Duration, set func(*RunConfig)) (Report, error) {
	t.Helper()
	cmd, env := fakeCommand(behaviour)
	var src sim.Source
	if pair {
		s, err := source.New("markov:V=3,order=1", 3, 2, 0)
		if err != nil {
			t.Fatal(err)
		}
		src = s
	} else {
		src = sim.Source{Spec: "test pool", BlockSource: testPool(t, 50, 3, 4)}
	}
	cfg := RunConfig{
		Config: Config{Command: cmd, Env: env, Mode: Verify, Timeout: timeout},
		Check:  check.Config{Gamma: 3, Trials: 20000, Seed: 5, Batch: 500},
	}
	set(&cfg)
	return Run(context.Background(), src, cfg)
}

// TestConformAndSeconds: --conform R tests an external implementation
// against rule R's law given the drafts (the token rule conforms to
// token, mutant-resample-p does not); a --seconds budget chooses the
// trial count (the pilot's rate on a loaded machine makes the budget
// approximate, hence the loose bound on the time); the report carries check's mode
// and the external run's batch and mode.
func TestConformAndSeconds(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		rule, want string
	}{{"token", check.NotDetected}, {"mutant-resample-p", check.Violated}} {
		rep, err := runFakeWith(t, c.rule, false, 20*time.Second, func(cfg *RunConfig) { cfg.Conform = "token" })
		if err != nil {
			t.Fatalf("%s: %v", c.rule, err)
		}
		if rep.Verdict != c.want || rep.Mode != "conform:token" || len(rep.Tests) != 1 {
			t.Errorf("%s conform token: verdict %s, mode %s, %d tests; want %s, conform:token, 1 test", c.rule, rep.Verdict, rep.Mode, len(rep.Tests), c.want)
		}
		if rep.ExternalMode != Verify || rep.Batch != 500 || rep.Implementation != "fake:"+c.rule {
			t.Errorf("%s: report says mode %s, batch %d, implementation %q", c.rule, rep.ExternalMode, rep.Batch, rep.Implementation)
		}
	}
	start := time.Now()
	rep, err := runFakeWith(t, "token", false, 20*time.Second, func(cfg *RunConfig) { cfg.Check.Seconds = 1.5 })
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start).Seconds(); rep.Verdict != check.NotDetected || rep.Trials < 4096 || rep.Trials == 20000 || rep.Elapsed > 4*1.5 || d > 15 {
		t.Errorf("seconds 1.5: verdict %s, %d trials in %.2f s of check (%.2f s in all)", rep.Verdict, rep.Trials, rep.Elapsed, d)
	}
	if _, err := runFakeWith(t, "token", false, 20*time.Second, func(cfg *RunConfig) { cfg.Conform = "no-such-rule" }); err == nil {
		t.Error("conform to an unknown rule accepted")
	}
}

// TestFakeImplementations runs Go rules as external processes: the token
// rule is preserved and a mutant violated, on a pool (rows sent once)
// and on a model pair (rows per batch); mutant-zero-coin is caught by the
// scripted-coin edge batches only.
func TestFakeImplementations(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		rule       string
		pair       bool
		want, edge string
	}{
		{"token", false, check.NotDetected, check.Passed},
		{"token", true, check.NotDetected, check.Passed},
		{"mutant-bonus-row", true, check.Violated, check.Passed},
		{"mutant-resample-p", false, check.Violated, check.Passed},
		{"mutant-zero-coin", false, check.Violated, check.Violated},
	} {
		rep, err := runFake(t, c.rule, c.pair, 20*time.Second)
		if err != nil {
			t.Fatalf("%s: %v", c.rule, err)
		}
		if rep.Verdict != c.want || rep.Edge != c.edge {
			t.Errorf("%s (pair %v): verdict %s, edge %s (%s); want %s, %s", c.rule, c.pair, rep.Verdict, rep.Edge, rep.EdgeMsg, c.want, c.edge)
		}
		if rep.Implementation != "fake:"+c.rule || rep.Trials != 20000 {
			t.Errorf("%s: report names %q with %d trials", c.rule, rep.Implementation, rep.Trials)
		}
	}
}

// TestFakeFailures: a crash, a hang (timeout) and a lie each end the run
// with one error line naming the batch, and never hang.
func TestFakeFailures(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		behaviour string
		want      []string
	}{
		{"crash", []string{"batch 0 (steps 0..499)", "exited (exit status 7)"}},
		{"hang", []string{"batch 0 (steps 0..499)", "no answer within the timeout of 1s", "killed"}},
		{"noise", []string{"batch 0", "does not start with a JSON header line", "stderr"}},
	} {
		start := time.Now()
		_, err := runFake(t, c.behaviour, false, time.Second)
		if err == nil {
			t.Errorf("%s: no error", c.behaviour)
			continue
		}
		msg := err.Error()
		if strings.Contains(msg, "\n") {
			t.Errorf("%s: the error spans several lines: %q", c.behaviour, msg)
		}
		for _, w := range c.want {
			if !strings.Contains(msg, w) {
				t.Errorf("%s: error %q lacks %q", c.behaviour, msg, w)
			}
		}
		if d := time.Since(start); d > 15*time.Second {
			t.Errorf("%s: took %v", c.behaviour, d)
		}
	}
}

// TestInvalidOutcomes: an answer that is well formed but that no correct
// sampler gives (here, row 3 of every batch claims an accepted token that
// is not the draft sent, as a batched sampler whose indexing overwrites
// other rows' accepted tokens does) is not a protocol error: the check
// runs to its end, counts the steps as invalid outcomes, shows examples
// in the "outcomes" component and says violated.
func TestInvalidOutcomes(t *testing.T) {
	t.Parallel()
	rep, err := runFake(t, "lie", false, 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Verdict != check.Violated || rep.Invalid != 40 || rep.Trials != 20000 {
		t.Errorf("verdict %s, %d invalid outcomes in %d trials; want violated, 40 (one a batch of 500), 20000", rep.Verdict, rep.Invalid, rep.Trials)
	}
	if len(rep.Components) != 1 || rep.Components[0].Name != "outcomes" || rep.Components[0].Verdict != check.Violated ||
		!strings.Contains(rep.Components[0].Detail, "40 steps: accepted tokens were changed") ||
		!strings.Contains(rep.Components[0].Detail, "batch 0 (steps 0..499), step 3 (row 3): emitted [") {
		t.Errorf("components %+v", rep.Components)
	}
}

package external

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/sim/check"
)

// Modes.
const (
	// Verify: the harness samples the drafts; the implementation verifies.
	Verify = "verify"
	// Step: the implementation samples its own drafts from the draft
	// logits and verifies them.
	Step = "step"
)

// Coins of a batch: "random" hands the function a seeded
// numpy.random.Generator; "zero" and "max" hand it a scripted generator
// whose random() and uniform() draws are exactly 0, or 1 - 2^-53 (the
// edge-case batches).
const (
	coinsRandom = "random"
	coinsZero   = "zero"
	coinsMax    = "max"
)

// Config starts an implementation.
type Config struct {
	// Command is run with /bin/sh -c.
	Command string
	// Env is the child's environment (nil: the harness's own).
	Env []string
	// Mode is Verify or Step.
	Mode string
	// Gamma and V are the draft length and vocabulary of every batch.
	Gamma, V int
	// Sampling, when set, is passed to functions that take a fourth
	// argument; the harness then tests against the target law after the
	// same transforms (data.Sampling). Rows are shipped untransformed.
	Sampling *Sampling
	// Timeout bounds every exchange (DefaultTimeout when 0).
	Timeout time.Duration
}

// Impl is a running external implementation. It is a check.Stepper (and,
// in step mode, a check.DraftSampler). Concurrent calls are serialized:
// one process answers one batch at a time.
type Impl struct {
	mu    sync.Mutex
	cfg   Config
	p     *proc
	name  string
	pool  *sim.Pool // the pool whose rows the child holds, or nil
	batch int       // batches sent so far
	step  int64     // steps sent so far
	err   error     // the first protocol error; every later call returns it

	ctx, drafts []int64
	rows, row   []float32
	emitted     array
	sampled     array
	scratch     []byte
}

var (
	_ check.Stepper      = (*Impl)(nil)
	_ check.DraftSampler = (*Impl)(nil)
)

// Start runs cfg.Command and exchanges the hello message: the child
// answers with its function's name and whether it takes sampling
// parameters.
func Start(cfg Config) (*Impl, error) { return StartContext(context.Background(), cfg) }

// StartContext is Start with every wait on the child (the hello, each
// batch, the close) listening to ctx: once ctx is done a wait returns at
// once with an error wrapping context.Canceled and the child's process
// group is killed.
func StartContext(ctx context.Context, cfg Config) (*Impl, error) {
	switch {
	case cfg.Mode != Verify && cfg.Mode != Step:
		return nil, fmt.Errorf("external: mode %q; use %q or %q", cfg.Mode, Verify, Step)
	case cfg.Gamma < 1 || cfg.Gamma > sim.MaxGamma:
		return nil, fmt.Errorf("external: gamma = %d; use 1 <= gamma <= %d", cfg.Gamma, sim.MaxGamma)
	case cfg.V < 2:
		return nil, fmt.Errorf("external: vocabulary %d; use V >= 2", cfg.V)
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	p, err := start(cfg.Command, cfg.Env, cfg.Timeout)
	if err != nil {
		return nil, err
	}
	p.watch(ctx)
	im := &Impl{cfg: cfg, p: p}
	err = p.send(header{Op: "hello", Protocol: ProtocolVersion, Mode: cfg.Mode, Gamma: cfg.Gamma, Vocab: cfg.V, Sampling: cfg.Sampling}, nil)
	var h header
	if err == nil {
		h, err = p.recv(nil, nil)
	}
	if err == nil && h.Op != "ready" {
		err = fmt.Errorf("the answer to hello is %q, want \"ready\"", h.Op)
	}
	if err == nil && cfg.Sampling != nil && !h.TakesSampling {
		err = fmt.Errorf("%s takes no sampling argument; give it a fourth parameter or drop the sampling flags", h.Name)
	}
	if err != nil {
		p.kill()
		err = fmt.Errorf("external: starting %q: %v", cfg.Command, err)
		// The shell's 126 (not executable) and 127 (not found) mean the
		// command line is wrong, not the implementation: a usage error.
		if c := p.cmd.ProcessState; c != nil && (c.ExitCode() == 126 || c.ExitCode() == 127) {
			err = usage(err)
		}
		return nil, err
	}
	im.name = h.Name
	return im, nil
}

// Name returns what the implementation calls itself (MODULE:FUNCTION for
// specsim_ext).
func (im *Impl) Name() string { return im.name }

// Sent returns the number of steps sent so far (edge cases included).
func (im *Impl) Sent() int64 {
	im.mu.Lock()
	defer im.mu.Unlock()
	return im.step
}

// SamplesDrafts implements check.DraftSampler: true in step mode.
func (im *Impl) SamplesDrafts() bool { return im.cfg.Mode == Step }

// Close asks the child to exit and waits for it; it kills it after the
// timeout.
func (im *Impl) Close() error {
	if im.err != nil {
		im.p.kill()
		return nil
	}
	if err := im.p.close(); err != nil {
		return fmt.Errorf("external: %s: %v", im.name, err)
	}
	return nil
}

// Kill ends the child at once.
func (im *Impl) Kill() { im.p.kill() }

// SetPool sends pl's rows once (float32 [contexts, γ+1, V] and
// [contexts, γ, V]: probabilities in verify mode, their logarithms in
// step mode); later batches whose blocks all carry a context index
// (Block.Ctx ≥ 0) ship only the indices.
func (im *Impl) SetPool(pl *sim.Pool) error {
	if im.err != nil {
		return im.err
	}
	if pl.Gamma != im.cfg.Gamma || pl.V != im.cfg.V {
		panic("external: pool shape differs from the implementation's configuration")
	}
	g, v, nc := pl.Gamma, pl.V, pl.Contexts
	err := im.p.send(header{Op: "pool", Contexts: nc, Arrays: []string{"p", "q"}}, func(w io.Writer) error {
		var err error
		for _, part := range []struct {
			rows [][]float32
			n    int
		}{{pl.P, g + 1}, {pl.Q, g}} {
			buf := im.rows[:0]
			for _, r := range part.rows {
				buf = im.appendRow(buf, r)
			}
			im.rows = buf
			if im.scratch, err = writeF32(w, []int{nc, part.n, v}, buf, im.scratch); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil {
		var h header
		h, err = im.p.recv(nil, nil)
		if err == nil && h.Op != "ok" {
			err = fmt.Errorf("the answer to the pool message is %q, want \"ok\"", h.Op)
		}
	}
	if err != nil {
		return im.fail(fmt.Errorf("external: %s: sending the pool's rows: %v", im.name, err))
	}
	im.pool = pl
	return nil
}

// appendRow appends a row as shipped: probabilities (verify mode) or
// log-probabilities (step mode; log 0 = -Inf).
func (im *Impl) appendRow(buf []float32, r []float32) []float32 {
	if im.cfg.Mode == Verify {
		return append(buf, r...)
	}
	for _, x := range r {
		buf = append(buf, float32(math.Log(float64(x))))
	}
	return buf
}

func (im *Impl) fail(err error) error {
	err = im.p.interrupted(err)
	im.err = err
	im.p.kill()
	return err
}

// Steps implements check.Stepper: one batch, one round trip. The batch's
// seed for the function's numpy.random.Generator is rng.Uint64().
func (im *Impl) Steps(rng *rand.Rand, bs []sim.Block, outs []sim.Outcome) error {
	return im.steps(rng.Uint64(), coinsRandom, bs, outs)
}

func (im *Impl) steps(seed uint64, coins string, bs []sim.Block, outs []sim.Outcome) error {
	im.mu.Lock()
	defer im.mu.Unlock()
	if im.err != nil {
		return im.err
	}
	b, g, v := len(bs), im.cfg.Gamma, im.cfg.V
	k, first := im.batch, im.step
	im.batch++
	im.step += int64(b)
	where := fmt.Sprintf("batch %d (steps %d..%d)", k, first, first+int64(b)-1)
	if b == 0 {
		return nil
	}
	for i := range bs {
		if bs[i].Gamma() != g || len(bs[i].P) != g+1 || len(bs[i].Q) != g || bs[i].V() != v {
			panic(fmt.Sprintf("external: block %d has γ = %d, V = %d; the implementation was started with γ = %d, V = %d", i, bs[i].Gamma(), bs[i].V(), g, v))
		}
	}
	pooled := im.pool != nil
	for i := range bs {
		if bs[i].Ctx < 0 || bs[i].Ctx >= max(1, contexts(im.pool)) {
			pooled = false
		}
	}
	h := header{Op: "batch", Batch: k, First: first, Size: b, Seed: seed, Coins: coins}
	if pooled {
		h.Rows, h.Arrays = "pool", []string{"ctx"}
	} else {
		h.Rows, h.Arrays = "inline", []string{"p", "q"}
	}
	if im.cfg.Mode == Verify {
		h.Arrays = append(h.Arrays, "drafts")
	}
	im.drafts = im.drafts[:0]
	for i := range bs {
		for _, x := range bs[i].Tokens {
			im.drafts = append(im.drafts, int64(x))
		}
	}
	err := im.p.send(h, func(w io.Writer) error {
		var err error
		if pooled {
			im.ctx = im.ctx[:0]
			for i := range bs {
				im.ctx = append(im.ctx, int64(bs[i].Ctx))
			}
			if im.scratch, err = writeI64(w, []int{b}, im.ctx, im.scratch); err != nil {
				return err
			}
		} else {
			for _, part := range []struct {
				n int
				q bool
			}{{g + 1, false}, {g, true}} {
				buf := im.rows[:0]
				for i := range bs {
					rows := bs[i].P
					if part.q {
						rows = bs[i].Q
					}
					for _, r := range rows {
						im.row = rowF32(im.row, r)
						buf = im.appendRow(buf, im.row)
					}
				}
				im.rows = buf
				if im.scratch, err = writeF32(w, []int{b, part.n, v}, buf, im.scratch); err != nil {
					return err
				}
			}
		}
		if im.cfg.Mode == Verify {
			im.scratch, err = writeI64(w, []int{b, g}, im.drafts, im.scratch)
		}
		return err
	})
	if err != nil {
		return im.fail(fmt.Errorf("external: %s: %s: %v", im.name, where, err))
	}
	want, arrs, shapes := []string{"emitted"}, []*array{&im.emitted}, [][]int{{b, g + 1}}
	if im.cfg.Mode == Step {
		want, arrs, shapes = []string{"drafts", "emitted"}, []*array{&im.sampled, &im.emitted}, [][]int{{b, g}, {b, g + 1}}
	}
	rh, err := im.p.recv(want, arrs, shapes...)
	if err == nil && (rh.Op != "result" || rh.Batch != k) {
		err = fmt.Errorf("the answer is %q for batch %d, want \"result\" for batch %d", rh.Op, rh.Batch, k)
	}
	if err != nil {
		return im.fail(fmt.Errorf("external: %s: %s: %v", im.name, where, err))
	}
	if im.cfg.Mode == Step {
		if err := checkShape("drafts", &im.sampled, b, g); err != nil {
			return im.fail(fmt.Errorf("external: %s: %s: %v", im.name, where, err))
		}
		for i := range bs {
			for j := 0; j < g; j++ {
				x := im.sampled.I64[i*g+j]
				if x < 0 || x >= int64(v) {
					return im.fail(fmt.Errorf("external: %s: %s, step %d: drafts[%d, %d] = %d is outside the vocabulary [0, %d)", im.name, where, first+int64(i), i, j, x, v))
				}
				bs[i].Tokens[j] = int(x)
			}
		}
		copy(im.drafts, im.sampled.I64)
	}
	if err := checkShape("emitted", &im.emitted, b, g+1); err != nil {
		return im.fail(fmt.Errorf("external: %s: %s: %v", im.name, where, err))
	}
	for i := range bs {
		o, err := decodeRow(im.emitted.I64[i*(g+1):(i+1)*(g+1)], im.drafts[i*g:(i+1)*g], v)
		if err != nil {
			return im.fail(fmt.Errorf("external: %s: %s, step %d (row %d): %v", im.name, where, first+int64(i), i, err))
		}
		outs[i] = o
	}
	return nil
}

func contexts(pl *sim.Pool) int {
	if pl == nil {
		return 0
	}
	return pl.Contexts
}

// rowF32 writes r's values as float32 into dst, reusing it.
func rowF32(dst []float32, r sim.Row) []float32 {
	dst = dst[:0]
	for i := range r.Len() {
		dst = append(dst, float32(r.At(i)))
	}
	return dst
}

// checkShape checks an integer reply array of shape [b, n].
func checkShape(name string, a *array, b, n int) error {
	if a.I64 == nil && a.F32 != nil {
		return fmt.Errorf("%s has dtype %s; return integer tokens (numpy.int64)", name, a.Descr)
	}
	if len(a.Shape) != 2 || a.Shape[0] != b || a.Shape[1] != n {
		return fmt.Errorf("%s has shape %v, want [%d %d]", name, a.Shape, b, n)
	}
	if a.Descr != "<i8" {
		return fmt.Errorf("%s has dtype %s, want int64 (<i8)", name, a.Descr)
	}
	return nil
}

// errNoToken is a row that emits nothing.
var errNoToken = errors.New("emitted row is all -1; a step emits at least the correction or bonus token")

// decodeRow turns one emitted row (accepted drafts, the correction or
// bonus token, -1 padding) into an Outcome: k leading tokens give
// Accepted = k-1 and Next = row[k-1]. The first k-1 tokens must equal the
// drafts; every token must lie in [0, V); after the first -1 only -1 may
// follow.
func decodeRow(row, drafts []int64, v int) (sim.Outcome, error) {
	k := 0
	for k < len(row) && row[k] != -1 {
		k++
	}
	for j := range row {
		x := row[j]
		switch {
		case j >= k && x != -1:
			return sim.Outcome{}, fmt.Errorf("emitted token %d at position %d follows -1 padding at position %d; pad only at the end", x, j, k)
		case j < k && (x < 0 || x >= int64(v)):
			return sim.Outcome{}, fmt.Errorf("emitted token %d at position %d is outside the vocabulary [0, %d) (pad with -1)", x, j, v)
		}
	}
	if k == 0 {
		return sim.Outcome{}, errNoToken
	}
	for j := 0; j < k-1; j++ {
		if row[j] != drafts[j] {
			return sim.Outcome{}, fmt.Errorf("emitted token %d at position %d differs from draft %d although a later token follows it: the accepted prefix must be the drafts sent", row[j], j, drafts[j])
		}
	}
	return sim.Outcome{Accepted: k - 1, Next: int(row[k-1])}, nil
}

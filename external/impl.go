package external

import (
	"context"
	"fmt"
	"io"
	"math"
	"sync"
	"time"

	"github.com/specsim/specsim/sim"
)

// Modes.
const (
	// Verify: the harness samples the drafts; the implementation verifies.
	Verify = "verify"
	// Step: the implementation samples its own drafts (from the pool's
	// logits, or from the model the harness ships) and verifies them; the
	// harness judges the tokens it emits.
	Step = "step"
	// Tree: the harness drafts a token tree; the implementation verifies
	// it (protocol 2).
	Tree = "tree"
)

// Where an implementation's rows come from (the hello message's
// "source"): a pool's rows sent once, a Markov model pair's tables sent
// once, or rows sent with every batch.
const (
	SourcePool   = "pool"
	SourceMarkov = "markov"
	SourceInline = "inline"
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
	// Mode is Verify, Step or Tree.
	Mode string
	// Gamma and V are the draft length (the tree depth in tree mode) and
	// the vocabulary of every batch.
	Gamma, V int
	// Source says where the rows come from (SourcePool, SourceMarkov or
	// SourceInline; "" is SourceInline).
	Source string
	// Draft names the tree drafter (tree mode), for the hello message.
	Draft string
	// Sampling, when set, is passed to functions that take it; the
	// harness then tests against the target law after the same transforms
	// (data.Sampling). Rows are shipped untransformed.
	Sampling *Sampling
	// Rows, when set, composes every batch like a serving engine's: step t
	// of the run is a row of kind Rows[t mod len(Rows)] (its own sampling
	// parameters, draft length and seeding), and every batch carries the
	// per-row arrays (protocol 2). The source must be a pool.
	Rows []RowConfig
	// MemBudget bounds the bytes of one batch's rows (0:
	// sim.DefaultMemBudget).
	MemBudget int64
	// Timeout bounds every exchange (DefaultTimeout when 0).
	Timeout time.Duration
}

// needsV2 returns what of cfg needs protocol 2, or "".
func (cfg *Config) needsV2() string {
	switch {
	case cfg.Mode == Tree:
		return "tree mode"
	case cfg.Mode == Step && cfg.Source == SourceMarkov:
		return "step mode on a model pair (the model is shipped)"
	case len(cfg.Rows) > 0:
		return "composed batches (per-row sampling, draft lengths and seeds)"
	}
	return ""
}

// Impl is a running external implementation. It is a sim.Stepper (verify
// and step mode) and a sim.TreeStepper (tree mode). Concurrent calls are
// serialized: one process answers one batch at a time.
type Impl struct {
	mu      sync.Mutex
	cfg     Config
	p       *proc
	name    string
	version int       // the protocol version in use
	pool    *sim.Pool // the pool whose rows the child holds, or nil
	pair    *sim.Pair // the model pair whose tables the child holds, or nil
	mp, mq  *sim.Markov
	batch   int   // batches sent so far
	step    int64 // steps sent so far
	err     error // the first protocol error; every later call returns it
	invalid invalidLog
	broken  contractLog // step-mode answers whose accepted tokens are not their drafts
	det     determinism
	// needDrafts refuses step-mode answers without drafts (a conformance
	// test needs them).
	needDrafts bool

	ctx, drafts []int64
	rows, row   []float32
	emitted     array
	sampled     array
	scratch     []byte
	path        []int
	prow        []float64
	tb          treeBufs
}

var (
	_ sim.Stepper     = (*Impl)(nil)
	_ sim.TreeStepper = (*Impl)(nil)
)

// Start runs cfg.Command and exchanges the hello message: the child
// answers with its function's name, whether it takes sampling parameters
// and the protocol version it speaks.
func Start(cfg Config) (*Impl, error) { return StartContext(context.Background(), cfg) }

// StartContext is Start with every wait on the child (the hello, each
// batch, the close) listening to ctx: once ctx is done a wait returns at
// once with an error wrapping context.Canceled and the child's process
// group is killed.
func StartContext(ctx context.Context, cfg Config) (*Impl, error) {
	if cfg.Source == "" {
		cfg.Source = SourceInline
	}
	maxGamma := sim.MaxGamma
	if cfg.Mode == Tree {
		maxGamma = sim.MaxTreeDepth
	}
	switch {
	case cfg.Mode != Verify && cfg.Mode != Step && cfg.Mode != Tree:
		return nil, fmt.Errorf("external: mode %q; use %q, %q or %q", cfg.Mode, Verify, Step, Tree)
	case cfg.Gamma < 1 || cfg.Gamma > maxGamma:
		return nil, fmt.Errorf("external: gamma = %d; use 1 <= gamma <= %d", cfg.Gamma, maxGamma)
	case cfg.V < 2:
		return nil, fmt.Errorf("external: vocabulary %d; use V >= 2", cfg.V)
	case cfg.Source != SourcePool && cfg.Source != SourceMarkov && cfg.Source != SourceInline:
		return nil, fmt.Errorf("external: source %q; use %q, %q or %q", cfg.Source, SourcePool, SourceMarkov, SourceInline)
	}
	if err := checkRows(cfg.Rows, cfg.Gamma, cfg.Mode == Tree); err != nil {
		return nil, fmt.Errorf("external: %v", err)
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
	hello := header{Op: "hello", Protocol: ProtocolVersion, Protocols: []int{1, 2}, Mode: cfg.Mode, Gamma: cfg.Gamma,
		Vocab: cfg.V, Sampling: cfg.Sampling, Source: cfg.Source, Draft: cfg.Draft, PerRow: perRowArrays(cfg.Rows)}
	err = p.send(hello, nil)
	var h header
	if err == nil {
		h, err = p.recv(nil, nil)
	}
	if err == nil && h.Op != "ready" {
		err = fmt.Errorf("the answer to hello is %q, want \"ready\"", h.Op)
	}
	if err == nil {
		im.version = max(int(h.Protocol), 1)
		switch need := cfg.needsV2(); {
		case im.version < MinProtocol || im.version > ProtocolVersion:
			err = fmt.Errorf("%s speaks protocol %d; the harness speaks %d to %d", h.Name, im.version, MinProtocol, ProtocolVersion)
		case im.version < 2 && need != "":
			err = fmt.Errorf("%s speaks protocol 1, and %s needs protocol 2; update its specsim_ext (python/ of this repository)", h.Name, need)
		case cfg.Sampling != nil && !h.TakesSampling:
			err = fmt.Errorf("%s takes no sampling argument; give it a sampling parameter or drop the sampling flags", h.Name)
		}
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

// Protocol returns the protocol version in use (the implementation's
// answer to hello).
func (im *Impl) Protocol() int { return im.version }

// Sent returns the number of steps sent so far (edge cases included).
func (im *Impl) Sent() int64 {
	im.mu.Lock()
	defer im.mu.Unlock()
	return im.step
}

// Close asks the child to exit and waits for it; it kills its process
// group after CloseGrace, or at once when the context ends (the error
// then wraps context.Canceled).
func (im *Impl) Close() error {
	if im.err != nil {
		im.p.kill()
		return nil
	}
	if err := im.p.close(); err != nil {
		return fmt.Errorf("external: %s: %w", im.name, err)
	}
	return nil
}

// Kill ends the child at once.
func (im *Impl) Kill() { im.p.kill() }

// SetPool sends pl's rows once (float32 [contexts, γ+1, V] and
// [contexts, γ, V]: probabilities in verify and tree mode, their
// logarithms in step mode); later batches whose blocks all carry a
// context index (Block.Ctx ≥ 0) ship only the indices, and trees the
// index of every node's rows.
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
		err = im.expectOK("pool")
	}
	if err != nil {
		return im.fail(fmt.Errorf("external: %s: sending the pool's rows: %v", im.name, err))
	}
	im.pool = pl
	return nil
}

// SetModel sends the tables of a Markov model pair once (protocol 2):
// {"op":"model","kind":"markov","order":K,"contexts":S} with p and q
// float64 [S, V], S = (V+1)^K rows indexed by the state of the last K
// tokens (sim.Markov.State): probabilities in verify and tree mode,
// natural logarithms in step mode. In step mode the implementation drafts
// from the model itself; in tree mode batches then carry the state of
// every node instead of its rows.
func (im *Impl) SetModel(pr sim.Pair) error {
	if im.err != nil {
		return im.err
	}
	mp, mq := sim.MarkovOf(pr.P), sim.MarkovOf(pr.Q)
	if mp == nil || mq == nil || mp.K != mq.K || mp.V != im.cfg.V || mq.V != im.cfg.V {
		return fmt.Errorf("external: the model pair %s is not a Markov pair of one order over V = %d; ship models of markov: sources only", pr.Name, im.cfg.V)
	}
	s, v := len(mp.Rows), mp.V
	err := im.p.send(header{Op: "model", Kind: "markov", Order: mp.K, Contexts: s, Arrays: []string{"p", "q"}}, func(w io.Writer) error {
		buf := make([]float64, 0, s*v)
		var err error
		for _, m := range []*sim.Markov{mp, mq} {
			buf = buf[:0]
			for _, r := range m.Rows {
				for _, x := range r {
					if im.cfg.Mode == Step {
						x = math.Log(x)
					}
					buf = append(buf, x)
				}
			}
			if im.scratch, err = writeF64(w, []int{s, v}, buf, im.scratch); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil {
		err = im.expectOK("model")
	}
	if err != nil {
		return im.fail(fmt.Errorf("external: %s: sending the model's tables: %v", im.name, err))
	}
	im.pair, im.mp, im.mq = &pr, mp, mq
	return nil
}

// expectOK reads the {"op":"ok"} answer to message what.
func (im *Impl) expectOK(what string) error {
	h, err := im.p.recv(nil, nil)
	if err == nil && h.Op != "ok" {
		err = fmt.Errorf("the answer to the %s message is %q, want \"ok\"", what, h.Op)
	}
	return err
}

// appendRow appends a row as shipped: probabilities (verify and tree
// mode) or log-probabilities (step mode; log 0 = -Inf).
func (im *Impl) appendRow(buf []float32, r []float32) []float32 {
	if im.cfg.Mode != Step {
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

// next numbers a batch of b steps and returns its number, its first step
// and its description for errors.
func (im *Impl) next(b int) (int, int64, string) {
	k, first := im.batch, im.step
	im.batch++
	im.step += int64(b)
	return k, first, fmt.Sprintf("batch %d (steps %d..%d)", k, first, first+int64(b)-1)
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

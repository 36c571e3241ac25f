package sweep

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/specsim/specsim/experiments"
	"github.com/specsim/specsim/internal/diag"
	"github.com/specsim/specsim/table"
)

// Store keeps finished cells of a sweep (data/results.Dir writes one
// Parquet file per cell). Implementations must be safe for concurrent use.
type Store interface {
	// Done reports whether cell idx is already stored for this sweep; a
	// stored cell of another sweep (spec or seed) or an unreadable file is
	// an error naming the file.
	Done(idx int, c table.Cell) (bool, error)
	// Save stores cell idx's rows atomically: after a crash the cell is
	// either fully stored or absent.
	Save(idx int, c table.Cell, rows []table.Row) error
}

// Plan is a sweep ready to run: a spec, its experiment, its cells and the
// master seed.
type Plan struct {
	Spec   *Spec
	Exp    experiments.Experiment
	Cells  []table.Cell
	Seed   uint64
	Config experiments.Config
}

// NewPlan expands spec with master seed seed.
func NewPlan(spec *Spec, seed uint64) (*Plan, error) {
	e, err := gridOf(spec.Experiment)
	if err != nil {
		return nil, err
	}
	cfg := experiments.Config{Seed: seed, Scale: spec.Scale, Workers: 1}
	cells, err := spec.Cells(cfg)
	if err != nil {
		return nil, err
	}
	ids := map[string]int{}
	for i, c := range cells {
		if j, dup := ids[c.ID()]; dup {
			return nil, fmt.Errorf("cells %d and %d have the same key %s; cells must be distinct", j, i, c.ID())
		}
		ids[c.ID()] = i
	}
	return &Plan{Spec: spec, Exp: e, Cells: cells, Seed: seed, Config: cfg}, nil
}

// RunCell computes cell idx with experiments.Config.Workers = workers:
// the rows of the experiment, restricted to the key and the spec's
// metrics, each prefixed by experiments.Prefix. The result depends only on
// the master seed and the cell (experiments.CellSeed), never on which
// process or worker runs it.
func (p *Plan) RunCell(ctx context.Context, idx, workers int) ([]table.Row, error) {
	c := p.Cells[idx]
	cfg := p.Config
	cfg.Workers = max(1, workers)
	rows, err := p.Exp.Run(ctx, cfg, c, experiments.CellSeed(p.Seed, p.Exp.Name, c))
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := make([]table.Row, len(rows))
	for i, r := range rows {
		out[i] = experiments.Prefix(p.Exp.Name, c, r)
	}
	return p.keepMetrics(c, out)
}

// keepMetrics drops metric columns the spec does not name. A named metric
// that no row has is an error, unless the experiment declares it.
func (p *Plan) keepMetrics(c table.Cell, rows []table.Row) ([]table.Row, error) {
	ms := p.Spec.Metrics
	if len(ms) == 0 {
		return rows, nil
	}
	keep := map[string]bool{"experiment": true}
	for _, kv := range c.Key {
		keep[kv.K] = true
	}
	for _, m := range ms {
		keep[m] = true
	}
	var declared []string
	if p.Exp.Spec != nil {
		declared = p.Exp.Spec.Metrics
	}
	for _, m := range ms {
		if slices.Contains(declared, m) {
			continue
		}
		found := false
		var cols []string
		for _, r := range rows {
			for _, kv := range r {
				found = found || kv.K == m
				if len(cols) < 64 && !slices.Contains(cols, kv.K) {
					cols = append(cols, kv.K)
				}
			}
		}
		if !found && len(rows) > 0 {
			return nil, fmt.Errorf("field metrics: %q is not a column of experiment %s; its columns: %s", m, p.Exp.Name, strings.Join(cols, ", "))
		}
	}
	out := make([]table.Row, len(rows))
	for i, r := range rows {
		for _, kv := range r {
			if keep[kv.K] {
				out[i] = append(out[i], kv)
			}
		}
	}
	return out, nil
}

// Options configures Plan.Run.
type Options struct {
	// Shard selects the cells to run (zero value: all).
	Shard Shard
	// Workers is the number of cells computed in parallel (0: 1).
	Workers int
	// Store, if set, skips stored cells and saves each finished one.
	Store Store
	// Progress, if set, is called after every finished cell, from one
	// goroutine at a time.
	Progress func(Progress)
}

// Progress reports a running sweep.
type Progress struct {
	// Done counts cells computed in this run, Skipped cells found stored,
	// Total the cells of the shard.
	Done, Skipped, Total int
	Elapsed              time.Duration
	// Cell is the cell just finished (Index into Plan.Cells).
	Cell  table.Cell
	Index int
}

// Result is what Plan.Run computed.
type Result struct {
	// Rows are the rows of the cells computed in this run, in cell order
	// (stored cells that were skipped are not re-read).
	Rows []table.Row
	// Indices are the cell indices of the shard; Computed and Skipped
	// count them.
	Indices           []int
	Computed, Skipped int
}

// Run computes the shard's cells that the store does not hold yet, with
// opt.Workers cells in parallel, saving each as it finishes. When ctx is
// cancelled it stops starting cells, abandons the running ones (their
// partial work is never saved) and returns ctx.Err() with every finished
// cell saved. A failing cell stops the sweep; the error of the lowest
// failing cell index is returned.
func (p *Plan) Run(ctx context.Context, opt Options) (Result, error) {
	shard := opt.Shard
	if shard.N == 0 {
		shard = All
	}
	if err := shard.Check(); err != nil {
		return Result{}, err
	}
	workers := max(1, opt.Workers)
	var res Result
	pending, err := p.pending(shard, opt.Store, &res)
	if err != nil {
		return res, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sr := &sweepRun{p: p, opt: opt, ctx: ctx, cancel: cancel, start: time.Now(), pending: pending, res: &res,
		// Spare workers go inside cells when there are fewer cells than
		// workers (Monte Carlo is deterministic for any worker count).
		inner: max(1, workers/max(1, min(workers, len(pending)))),
		rows:  make([][]table.Row, len(p.Cells)), errs: map[int]error{}}
	var wg sync.WaitGroup
	for range min(workers, len(pending)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sr.work()
		}()
	}
	wg.Wait()
	for _, i := range res.Indices {
		res.Rows = append(res.Rows, sr.rows[i]...)
	}
	if len(sr.errs) > 0 {
		keys := make([]int, 0, len(sr.errs))
		for k := range sr.errs {
			keys = append(keys, k)
		}
		sort.Ints(keys)
		return res, sr.errs[keys[0]]
	}
	return res, ctx.Err()
}

// pending lists the shard's cells into res.Indices and returns those the
// store does not hold yet, counting the others in res.Skipped.
func (p *Plan) pending(shard Shard, store Store, res *Result) ([]int, error) {
	var pending []int
	for i, c := range p.Cells {
		if !shard.Owns(i) {
			continue
		}
		res.Indices = append(res.Indices, i)
		if store != nil {
			done, err := store.Done(i, c)
			if err != nil {
				return nil, diag.IO(err)
			}
			if done {
				res.Skipped++
				continue
			}
		}
		pending = append(pending, i)
	}
	return pending, nil
}

// sweepRun is one Plan.Run's shared state: the pending cells (next is
// the next to start), each cell's rows and error by index, and the
// result's counts; mu guards next, rows, errs and res.
type sweepRun struct {
	p       *Plan
	opt     Options
	ctx     context.Context
	cancel  context.CancelFunc
	inner   int
	start   time.Time
	pending []int
	mu      sync.Mutex
	next    int
	rows    [][]table.Row
	errs    map[int]error
	res     *Result
}

// work is one worker: it computes and saves pending cells in turn until
// none is left or the run is cancelled.
func (sr *sweepRun) work() {
	p := sr.p
	for {
		sr.mu.Lock()
		if sr.ctx.Err() != nil || sr.next >= len(sr.pending) {
			sr.mu.Unlock()
			return
		}
		idx := sr.pending[sr.next]
		sr.next++
		sr.mu.Unlock()
		r, err := p.RunCell(sr.ctx, idx, sr.inner)
		if err == nil && sr.opt.Store != nil {
			if err = sr.opt.Store.Save(idx, p.Cells[idx], r); err != nil {
				err = diag.IO(err)
			}
		}
		sr.finish(idx, r, err)
	}
}

// finish records cell idx: its rows and progress, or its error (one that
// only says the run was cancelled is dropped), which cancels the run.
func (sr *sweepRun) finish(idx int, r []table.Row, err error) {
	p, res := sr.p, sr.res
	sr.mu.Lock()
	defer sr.mu.Unlock()
	if err != nil {
		if sr.ctx.Err() == nil || !errors.Is(err, context.Canceled) {
			sr.errs[idx] = fmt.Errorf("experiment %s, cell %d (%s): %w", p.Exp.Name, idx, p.Cells[idx].ID(), err)
		}
		sr.cancel()
		return
	}
	sr.rows[idx] = r
	res.Computed++
	if sr.opt.Progress != nil {
		sr.opt.Progress(Progress{Done: res.Computed, Skipped: res.Skipped, Total: len(res.Indices),
			Elapsed: time.Since(sr.start), Cell: p.Cells[idx], Index: idx})
	}
}

package algos

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/sim/draft"
	"github.com/specsim/specsim/sim/run"
	"github.com/specsim/specsim/sim/source"
)

// TreeBenchConfig describes the tree-verification benchmark: the rows of
// the chain benchmark (sim.BenchConfig: per position p ~ Dirichlet(0.1)
// over V and q a log-normal perturbation calibrated to mean Σmin(p, q) =
// Beta), one context per pre-drafted tree, node rows depending on the
// node's depth only, and K candidates of length Depth drawn by the rule's
// own drafter kind (K i.i.d. chains for SpecInfer, K-SEQ and naive; K
// children without replacement at the root and chains below for RRS
// without replacement; the top-K or greedy children at the root for the
// deterministic kinds). Trees are drawn before timing and cycled; their
// rows are the pool's float32 rows.
type TreeBenchConfig struct {
	V, K, Depth int
	Beta        float64
	// Trees is the number of distinct pre-drafted trees (default 8).
	Trees    int
	Duration time.Duration
	Seed     uint64
	// Params are the rule's parameters (nil: its defaults).
	Params Params
	// MemBudget is the most bytes the pool may take, and separately the
	// pre-drafted trees' rows (0: sim.DefaultMemBudget).
	MemBudget int64
}

// TreeBenchResult reports one rule's tree benchmark.
type TreeBenchResult struct {
	Rule           string  `json:"rule"`
	Draft          string  `json:"draft"`
	Trees          int64   `json:"trees"`
	Seconds        float64 `json:"seconds"`
	TreesPerSecond float64 `json:"trees_per_second"`
	// CPUSeconds is the timed loop's CPU time on its own thread (Linux;
	// 0 elsewhere) and TreesPerCPUSecond the trees per CPU-second, the
	// one-core figure that does not depend on other load.
	CPUSeconds        float64 `json:"cpu_seconds"`
	TreesPerCPUSecond float64 `json:"trees_per_cpu_second"`
	// MeanAccepted is the mean depth of the accepted node.
	MeanAccepted float64 `json:"mean_accepted"`
	// MeanNodes is the mean node count of the trees (root included).
	MeanNodes float64 `json:"mean_nodes"`
}

// depthModel is a model whose row depends on the context's length only:
// row i of one pool context (target rows P, draft rows Q).
type depthModel struct {
	pl     *sim.Pool
	c      int
	target bool
}

func (m depthModel) Vocab() int { return m.pl.V }

func (m depthModel) Next(ctx []int, dst []float64) {
	i := len(ctx)
	if m.target {
		sim.Float64s(dst[:0], m.pl.PRow(m.c, i))
		return
	}
	sim.Float64s(dst[:0], m.pl.QRow(m.c, min(i, m.pl.Gamma-1)))
}

// BenchTree times the tree rule e on one core for cfg.Duration.
func BenchTree(ctx context.Context, e TreeEntry, cfg TreeBenchConfig) (TreeBenchResult, error) {
	if cfg.Trees == 0 {
		cfg.Trees = 8
	}
	if err := validateTreeBench(cfg); err != nil {
		return TreeBenchResult{}, err
	}
	a, err := e.Build(cfg.Params)
	if err != nil {
		return TreeBenchResult{}, err
	}
	trees, nodes, err := benchTrees(e, cfg)
	if err != nil {
		return TreeBenchResult{}, err
	}
	defer sim.BeginTiming()() // the rules compute what an engine would
	l := &run.Loop{Seed: cfg.Seed, Keys: run.Named("treebench"), Trees: &cycledTrees{trees: trees}, Verifiers: []run.Verifier{run.Tree(a)}}
	wk, err := l.NewWorker()
	if err != nil {
		return TreeBenchResult{}, err
	}
	s := run.Shared(sim.NewRand(cfg.Seed, sim.StreamID("treebench/rule")))
	r := TreeBenchResult{Rule: e.Name, Draft: e.Draft.String(), MeanNodes: float64(nodes) / float64(len(trees))}
	if err := timeTrees(ctx, wk, s, cfg.Duration, &r); err != nil {
		return TreeBenchResult{}, err
	}
	return r, ctx.Err()
}

// validateTreeBench refuses a configuration the tree bench cannot time.
func validateTreeBench(cfg TreeBenchConfig) error {
	switch {
	case cfg.V < 2 || cfg.K < 1 || cfg.Depth < 1 || cfg.Depth > sim.MaxTreeDepth:
		return fmt.Errorf("tree bench: V = %d, k = %d, depth = %d; use V >= 2, k >= 1, 1 <= depth <= %d", cfg.V, cfg.K, cfg.Depth, sim.MaxTreeDepth)
	case cfg.Duration <= 0:
		return fmt.Errorf("tree bench: duration %v; time at least a moment", cfg.Duration)
	case cfg.Trees < 1:
		return fmt.Errorf("tree bench: trees = %d; draw at least one", cfg.Trees)
	}
	return nil
}

// benchTrees drafts the bench's cfg.Trees trees with e's drafter over a
// Dirichlet pool, each verified on the pool's float32 rows, and returns
// them with their total node count.
func benchTrees(e TreeEntry, cfg TreeBenchConfig) ([]sim.Tree, int, error) {
	// The trees' rows, before anything is drawn: every drafter kind of
	// the bench grows at most K chains of Depth nodes under the root, and
	// drafting gives each node a float64 target and draft row of V.
	nodesMax := sim.MulBytes(int64(cfg.K), int64(cfg.Depth))
	if nodesMax >= 0 {
		nodesMax++
	}
	if err := sim.CheckMem(fmt.Sprintf("tree bench: %d trees of up to %d nodes over V = %d", cfg.Trees, nodesMax, cfg.V),
		sim.MulBytes(int64(cfg.Trees), nodesMax, 2, int64(cfg.V), 8), cfg.MemBudget, "use a smaller vocabulary, k or depth"); err != nil {
		return nil, 0, err
	}
	pl, err := benchTreePool(cfg)
	if err != nil {
		return nil, 0, err
	}
	trees := make([]sim.Tree, cfg.Trees)
	nodes := 0
	drng := sim.NewRand(cfg.Seed, sim.StreamID("treebench/draft"))
	for c := range trees {
		d, err := draft.NewTree(e.Draft, draft.Config{Q: depthModel{pl, c, false}, K: cfg.K, Depth: cfg.Depth})
		if err != nil {
			return nil, 0, err
		}
		sim.DraftTree(drng, d, depthModel{pl, c, true}, nil, &trees[c])
		// verify on the pool's float32 rows themselves, as the chain
		// benchmark does (logged rows are float32)
		for i := range trees[c].Nodes {
			nd := &trees[c].Nodes[i]
			nd.P = sim.F32(pl.PRow(c, nd.Depth))
			if !nd.Q.IsZero() {
				nd.Q = sim.F32(pl.QRow(c, nd.Depth))
			}
		}
		if err := trees[c].Check(); err != nil {
			return nil, 0, err
		}
		nodes += len(trees[c].Nodes)
	}
	return trees, nodes, nil
}

// treePools keeps the last treePoolsKept pools benchTreePool built, by
// the configuration they depend on: a caller that benches several rules
// at the same seeds (the throughput experiment: four rules, five seeds
// each) builds each pool once. Pools are not written after they are built.
var treePools struct {
	sync.Mutex
	kept []treePool
}

const treePoolsKept = 8

type treePool struct {
	d    source.Dirichlet
	seed uint64
	pl   *sim.Pool
}

// benchTreePool returns the Dirichlet pool of cfg's trees (a = 0.1, its
// β, one context per tree, drawn from the stream "treebench/pool"), built
// once per configuration among the last few.
func benchTreePool(cfg TreeBenchConfig) (*sim.Pool, error) {
	d := source.Dirichlet{Shape: source.Shape{V: cfg.V, Gamma: cfg.Depth, Contexts: cfg.Trees, MemBudget: cfg.MemBudget},
		A: 0.1, Beta: cfg.Beta}
	treePools.Lock()
	for _, k := range treePools.kept {
		if k.d == d && k.seed == cfg.Seed {
			treePools.Unlock()
			return k.pl, nil
		}
	}
	treePools.Unlock()
	pl, err := d.Pool(sim.NewRand(cfg.Seed, sim.StreamID("treebench/pool")))
	if err != nil {
		return nil, err
	}
	treePools.Lock()
	defer treePools.Unlock()
	treePools.kept = append(treePools.kept, treePool{d, cfg.Seed, pl})
	if len(treePools.kept) > treePoolsKept {
		treePools.kept = treePools.kept[1:]
	}
	return pl, nil
}

// timeTrees verifies trees with wk, 64 at a time, on this locked thread
// until d has passed or ctx is done, and fills r's counts and rates.
func timeTrees(ctx context.Context, wk *run.Worker, s *run.Streams, d time.Duration, r *TreeBenchResult) error {
	var depth int64
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cpu0 := run.ThreadCPU()
	start := time.Now()
	deadline := start.Add(d)
	for ctx.Err() == nil {
		for range 64 {
			rd, err := wk.Round(s, r.Trees)
			if err != nil {
				return err
			}
			depth += int64(rd.Tree.Nodes[rd.TreeOutcome().Node].Depth)
			r.Trees++
		}
		if time.Now().After(deadline) {
			break
		}
	}
	r.Seconds = time.Since(start).Seconds()
	if cpu := run.ThreadCPU() - cpu0; cpu > 0 {
		r.CPUSeconds = cpu.Seconds()
		r.TreesPerCPUSecond = float64(r.Trees) / r.CPUSeconds
	}
	r.TreesPerSecond = float64(r.Trees) / r.Seconds
	r.MeanAccepted = float64(depth) / float64(r.Trees)
	return nil
}

// cycledTrees is the tree benchmark's drafter: the pre-drafted trees in
// turn (no copy, no randomness).
type cycledTrees struct {
	trees []sim.Tree
	c     int
}

func (ct *cycledTrees) DraftTree(r *run.Round, _ *sim.Tree) error {
	r.Tree = &ct.trees[ct.c]
	if ct.c++; ct.c == len(ct.trees) {
		ct.c = 0
	}
	return nil
}

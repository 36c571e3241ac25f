package algos

import (
	"fmt"
	"sync"
	"testing"

	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/sim/source"
)

// The benchmark workload of the foundation's bench: per position p ~
// Dirichlet(0.1) over V = 32000, q = norm(p·exp(σ N(0,1))) with σ
// calibrated to mean Σmin(p, q) = 0.7, float32 rows, a pool of at least
// 128 MiB so that rows come from memory rather than cache, contexts cycled,
// and benchDrafts drafts per context drawn before timing. Pool generation
// (tens of seconds) is excluded from timing and shared by the
// sub-benchmarks of one γ.
//
//	go test ./algos/ -run XXX -bench 'Block/' -benchtime 3s
//
// Besides ns/op each sub-benchmark reports steps/s; the lazy one reports
// z_frac, the fraction of the γ residual masses Z_i per step that the lazy
// form computes (the naive form computes all of them), and readall is the
// floor of merely summing all 2γ+1 rows once per step.
const (
	benchV        = 32000
	benchPoolSize = 128 << 20
	benchDrafts   = 64
)

type benchWorkload struct {
	pool   *sim.Pool
	tokens []int // [context][draft][position]
}

var (
	benchMu    sync.Mutex
	benchCache = map[int]*benchWorkload{}
)

func workload(b *testing.B, gamma int) *benchWorkload {
	benchMu.Lock()
	defer benchMu.Unlock()
	if w, ok := benchCache[gamma]; ok {
		return w
	}
	perCtx := (2*gamma + 1) * benchV * 4
	n := (benchPoolSize + perCtx - 1) / perCtx
	src, err := source.New(fmt.Sprintf("dirichlet:V=%d,a=0.1,beta=0.7,contexts=%d", benchV, n), gamma, 1, 0)
	if err != nil {
		b.Fatal(err)
	}
	pl, _ := sim.PoolOf(src)
	w := &benchWorkload{pool: pl, tokens: make([]int, n*benchDrafts*gamma)}
	rng := sim.NewRand(1, sim.StreamID("bench/drafts"))
	var blk sim.Block
	for c := 0; c < n; c++ {
		for d := 0; d < benchDrafts; d++ {
			pl.Fill(rng, c, &blk)
			copy(w.tokens[(c*benchDrafts+d)*gamma:], blk.Tokens)
		}
	}
	benchCache[gamma] = w
	return w
}

// steps runs fn on n consecutive steps of the workload, starting at step
// start: contexts are cycled, then the draft index.
func (w *benchWorkload) steps(start, n int, fn func(b *sim.Block)) {
	pl, g := w.pool, w.pool.Gamma
	blk := sim.Block{Q: make([]sim.Row, g), P: make([]sim.Row, g+1)}
	for k := start; k < start+n; k++ {
		c, d := k%pl.Contexts, (k/pl.Contexts)%benchDrafts
		for i := 0; i < g; i++ {
			blk.Q[i] = sim.F32(pl.QRow(c, i))
		}
		for i := 0; i <= g; i++ {
			blk.P[i] = sim.F32(pl.PRow(c, i))
		}
		t := (c*benchDrafts + d) * g
		blk.Tokens = w.tokens[t : t+g]
		fn(&blk)
	}
}

func BenchmarkBlock(b *testing.B) {
	for _, g := range []int{4, 8} {
		rules := []struct {
			name string
			a    sim.Algorithm
		}{{"lazy", Block{}}, {"naive", BlockNaive{}}, {"token", Token{}}, {"readall", nil}}
		for _, r := range rules {
			b.Run(fmt.Sprintf("%s/V=%d/gamma=%d", r.name, benchV, g), func(b *testing.B) {
				w := workload(b, g)
				rng := sim.NewRand(1, sim.StreamID("bench/rule", uint64(g)))
				sink := 0.0
				fn := func(blk *sim.Block) { sink += float64(r.a.Accept(rng, blk).Emitted()) }
				if r.a == nil {
					fn = func(blk *sim.Block) {
						for _, row := range blk.Q {
							sink += row.Sum()
						}
						for _, row := range blk.P {
							sink += row.Sum()
						}
					}
				}
				b.ResetTimer()
				k := 0
				for b.Loop() {
					w.steps(k, 1, fn)
					k++
				}
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "steps/s")
				if r.name == "lazy" {
					b.StopTimer()
					passes := 0
					rc := sim.NewRand(2, sim.StreamID("bench/count"))
					w.steps(0, 4096, func(blk *sim.Block) {
						_, np := blockLazy(rc, blk)
						passes += np
					})
					b.ReportMetric(float64(passes)/float64(4096*g), "z_frac")
				}
				_ = sink
			})
		}
	}
}

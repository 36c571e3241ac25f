package algos

import (
	"context"
	"flag"
	"testing"
	"time"

	"github.com/specsim/specsim/sim/draft"
)

var treeBenchDur = flag.Duration("treebench.duration", 0, "time every tree rule at V = 32000, k = 4, depth 4 for this long (0 skips)")

// TestTreeBench checks the benchmark's bookkeeping at a small V, and with
// -treebench.duration reports every tree rule at V = 32,000, k = 4 i.i.d.
// chains of depth 4.
func TestTreeBench(t *testing.T) {
	for _, e := range AllTree() {
		k := min(4, draft.KLimit(e.Draft.String()))
		r, err := BenchTree(context.Background(), e, TreeBenchConfig{V: 64, K: k, Depth: 4, Beta: 0.7, Trees: 3, Duration: time.Millisecond, Seed: 1})
		if err != nil {
			t.Fatalf("%s: %v", e.Name, err)
		}
		if r.Trees < 64 || !(r.MeanAccepted >= 0 && r.MeanAccepted <= 4) || r.MeanNodes < 5 || r.MeanNodes > 17 {
			t.Errorf("%s: %+v", e.Name, r)
		}
	}
	if *treeBenchDur == 0 {
		return
	}
	for _, e := range AllTree() {
		r, err := BenchTree(context.Background(), e, TreeBenchConfig{V: 32000, K: min(4, draft.KLimit(e.Draft.String())), Depth: 4, Beta: 0.7, Duration: *treeBenchDur, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%-22s %-6s %9.0f trees/s (wall)  %9.0f trees/CPU-s  mean accepted %.3f  nodes %.1f", r.Rule, r.Draft, r.TreesPerSecond, r.TreesPerCPUSecond, r.MeanAccepted, r.MeanNodes)
	}
}

// BenchmarkTree times SpecInfer and RRS without replacement at V = 32,000
// with k = 4 candidates of depth 4 (ns/op is per tree).
func BenchmarkTree(b *testing.B) {
	for _, name := range []string{"specinfer", "rrs-wor"} {
		e, _ := LookupTree(name)
		b.Run(name, func(b *testing.B) {
			r, err := BenchTree(context.Background(), e, TreeBenchConfig{V: 32000, K: 4, Depth: 4, Beta: 0.7, Duration: time.Second, Seed: 1})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(r.TreesPerSecond, "trees/s")
			b.ReportMetric(r.TreesPerCPUSecond, "trees/cpu-s")
		})
	}
}

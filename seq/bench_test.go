//go:build linux

package seq

import (
	"context"
	"syscall"
	"testing"

	"github.com/specsim/specsim/lm"
)

// BenchmarkGenerate measures the driver at V = 4096 (the code corpus's
// default BPE), chain drafter, γ = 4, token verification, one worker:
// ns/op is wall time per generated token; tokens/cpu-s counts the
// process's CPU time (user + system, so it holds on a loaded machine).
func BenchmarkGenerate(b *testing.B) {
	pr, err := lm.NewPair("code:order=6,cache=0.5", "order=2", lm.Options{CacheDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	ps, err := pr.Prompts(4, 128)
	if err != nil {
		b.Fatal(err)
	}
	var ru0, ru1 syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
	b.ResetTimer()
	r, err := Generate(context.Background(), Config{Pair: pr.Pair, Prompts: ps, Tokens: max(1, b.N/4), Drafter: chain,
		Algo: "token", Gamma: 4, Workers: 1, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
	cpu := float64(ru1.Utime.Nano()-ru0.Utime.Nano()+ru1.Stime.Nano()-ru0.Stime.Nano()) / 1e9
	b.ReportMetric(r.TokensPerCall, "tokens/call")
	b.ReportMetric(float64(r.Emitted)/cpu, "tokens/cpu-s")
}

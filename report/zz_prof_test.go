package report

import (
	"context"
	"os"
	"testing"
)

func TestZZProf(t *testing.T) {
	if os.Getenv("ZZ") == "" {
		t.Skip()
	}
	err := Reproduce(context.Background(), ReproduceOptions{Out: t.TempDir(), Seed: 1, Scale: 1, Workers: 2, Paper: false,
		Experiments: []string{"block-vs-token", "seeds", "lossy-frontier", "drafters", "smc-steering", "throughput", "multidraft", "dynamic-gamma"}})
	if err != nil {
		t.Fatal(err)
	}
}

package data_test

import (
	"errors"
	"io"
	"testing"

	"github.com/specsim/specsim/data"
	"github.com/specsim/specsim/sim"
)

// TestStepSource: the replay source yields every logged step in file
// order, with the logged draft tokens and the reader's processed rows
// copied into the caller's block, Ctx = the file row, then io.EOF.
func TestStepSource(t *testing.T) {
	pair := markovPair(t, "markov:V=4,order=1,seed=7")
	path := writeRun(t, pair, data.RunConfig{Steps: 25, Gamma: 3, Seed: 2, Sampling: data.Sampling{Temperature: 1, TopP: 1}}, data.WriterOptions{})
	want, err := data.Open(path, data.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer want.Close()
	r, err := data.Open(path, data.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var src sim.BlockSource = data.NewStepSource(r)
	var b sim.Block
	n := 0
	for want.Next() {
		if err := src.Next(nil, &b); err != nil {
			t.Fatalf("step %d: %v", n, err)
		}
		wb := want.Block()
		if b.Ctx != n || len(b.Tokens) != len(wb.Tokens) {
			t.Fatalf("step %d: ctx %d, γ %d; want ctx %d, γ %d", n, b.Ctx, len(b.Tokens), n, len(wb.Tokens))
		}
		for i, x := range wb.Tokens {
			if b.Tokens[i] != x {
				t.Fatalf("step %d: token %d is %d, logged %d", n, i, b.Tokens[i], x)
			}
		}
		for i := range wb.P {
			for x := 0; x < wb.V(); x++ {
				if b.P[i].At(x) != wb.P[i].At(x) || (i < len(wb.Q) && b.Q[i].At(x) != wb.Q[i].At(x)) {
					t.Fatalf("step %d: row %d differs at %d", n, i, x)
				}
			}
		}
		n++
	}
	if n != 25 {
		t.Fatalf("read %d steps, want 25", n)
	}
	if err := src.Next(nil, &b); !errors.Is(err, io.EOF) {
		t.Fatalf("after the last step: %v, want io.EOF", err)
	}
}

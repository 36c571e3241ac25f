package source_test

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"testing"

	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/sim/source"
)

// TestRowsPinned: every kind draws the same numbers from the same spec and
// seed as sim.NewSource did before the kinds moved into this package. The
// digests hash, in order, the pool's float32 target and draft rows, its σ
// and mean β (or the pair's float64 target and draft rows), and the draft
// tokens of five blocks drawn with sim.NewRand(1, 2); they were computed
// with sim.NewSource(spec, 3, 7) at commit 6d0fd68. A seed reproduces rows
// only at the same commit: change a digest only with a change that is
// meant to change the kind's numbers.
func TestRowsPinned(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ spec, canon, digest string }{
		{"dirichlet:V=300,contexts=3,beta=0.6", "dirichlet:V=300,beta=0.6,contexts=3", "13bae906bbe63755"},
		{"dirichlet:V=50,a=0.01,beta=1,seed=4", "dirichlet:V=50,a=0.01,beta=1,seed=4", "55d3e9487b698406"},
		{"temperature:V=200,T=2.5,contexts=2", "temperature:T=2.5,V=200,contexts=2", "8e3011646960a12c"},
		{"zipf:V=128,s=1e-3,contexts=2", "zipf:V=128,contexts=2,s=1e-3", "a5424b53b23bfef6"},
		{"zipf:V=300,s=1.1,sq=0.7", "zipf:V=300,s=1.1,sq=0.7", "201a0becfeaf78fa"},
		{"markov:V=5,order=2,a=0.3,quality=0.2", "markov:V=5,a=0.3,order=2,quality=0.2", "387e8d2b14bc3384"},
		{"markov:V=3,a=1e-9,seed=13", "markov:V=3,a=1e-9,seed=13", "7438525f27893005"},
	} {
		src, err := source.New(c.spec, 3, 7, 0)
		if err != nil {
			t.Fatalf("%s: %v", c.spec, err)
		}
		if got := digest(src); src.Spec != c.canon || got != c.digest {
			t.Errorf("%s: spec %s digest %s, want %s %s", c.spec, src.Spec, got, c.canon, c.digest)
		}
	}
}

func digest(src sim.Source) string {
	h := sha256.New()
	put := func(f float64) {
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], math.Float64bits(f))
		h.Write(b[:])
	}
	if pl, ok := sim.PoolOf(src); ok {
		for _, rows := range [][][]float32{pl.P, pl.Q} {
			for _, r := range rows {
				for _, v := range r {
					put(float64(v))
				}
			}
		}
		put(pl.Sigma)
		put(pl.MeanBeta)
	} else {
		pr, _ := sim.PairOf(src)
		for _, m := range []*sim.Markov{pr.P.(*sim.Markov), pr.Q.(*sim.Markov)} {
			for _, r := range m.Rows {
				for _, v := range r {
					put(v)
				}
			}
		}
	}
	rng := sim.NewRand(1, 2)
	var b sim.Block
	for range 5 {
		if err := src.Next(rng, &b); err != nil {
			return err.Error()
		}
		for _, tok := range b.Tokens {
			put(float64(tok))
		}
	}
	return fmt.Sprintf("%x", h.Sum(nil)[:8])
}

package data

import (
	"io"
	"math/rand/v2"
	"sync"

	"github.com/specsim/specsim/sim"
)

// StepSource is the replay source: a sim.BlockSource over the steps of a
// log, in file order. Each Next copies the next step's processed rows and
// logged draft tokens into dst (dst's rows are its own, reused once
// filled), sets dst.Ctx to the step's file row, and returns io.EOF after
// the last step or the reader's error on a bad step. The draft is the
// logged one, so rng is not used. Calls are serialised, so it is safe for
// concurrent use with distinct dsts; the reader must not be used
// elsewhere meanwhile.
type StepSource struct {
	mu sync.Mutex
	r  *Reader
}

// NewStepSource returns the replay source over r from its current
// position.
func NewStepSource(r *Reader) *StepSource { return &StepSource{r: r} }

// Next fills dst with the next logged step.
func (s *StepSource) Next(_ *rand.Rand, dst *sim.Block) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.r.Next() {
		if err := s.r.Err(); err != nil {
			return err
		}
		return io.EOF
	}
	b := s.r.Block()
	g := len(b.Tokens)
	if cap(dst.Tokens) < g {
		dst.Tokens = make([]int, g)
	}
	if cap(dst.Q) < g {
		dst.Q = make([]sim.Row, g)
	}
	if cap(dst.P) < g+1 {
		dst.P = make([]sim.Row, g+1)
	}
	dst.Tokens, dst.Q, dst.P = dst.Tokens[:g], dst.Q[:g], dst.P[:g+1]
	copy(dst.Tokens, b.Tokens)
	for i := range dst.Q {
		sim.CopyRow(&dst.Q[i], b.Q[i])
	}
	for i := range dst.P {
		sim.CopyRow(&dst.P[i], b.P[i])
	}
	dst.Ctx = int(s.r.Row())
	return nil
}

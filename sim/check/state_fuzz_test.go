package check_test

import (
	"context"
	"crypto/sha256"
	"testing"

	"github.com/specsim/specsim/sim/check"
)

// FuzzUnmarshalState: any payload, its checksum recomputed so that the
// decoder's own checks are reached, is either refused with an error or
// decodes to a state that marshals back to the same bytes; it never
// panics. The seed corpus is a real state.
func FuzzUnmarshalState(f *testing.F) {
	c := smallShards(f)
	c.cfg.Trials = 3000
	st, err := check.CheckState(context.Background(), c.src, c.rule, c.cfg, nil)
	if err != nil {
		f.Fatal(err)
	}
	b, _ := st.MarshalBinary()
	f.Add(b[:len(b)-sha256.Size])
	f.Fuzz(func(t *testing.T, body []byte) {
		sum := sha256.Sum256(body)
		in := append(append([]byte(nil), body...), sum[:]...)
		s, err := check.UnmarshalState(in, 1<<24)
		if err != nil {
			return
		}
		out, _ := s.MarshalBinary()
		if string(out) != string(in) {
			t.Errorf("a decoded state marshals to other bytes")
		}
	})
}

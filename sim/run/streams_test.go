package run_test

import (
	"testing"

	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/sim/run"
)

// Named's id for role r is sim.StreamID(name+"/"+r, keys..., unit), with
// any number of keys, and a round asks for it without allocating (hot
// loops ask twice per round: draft and coins).
func TestNamedKeys(t *testing.T) {
	for _, keys := range [][]uint64{nil, {4}, {1, 2, 3, 4, 5, 6, 7}, {1, 2, 3, 4, 5, 6, 7, 8, 9}} {
		k := run.Named("x", keys...)
		for _, u := range []uint64{0, 1, 1 << 40} {
			for _, r := range run.Roles() {
				want := sim.StreamID("x/"+r.String(), append(append([]uint64(nil), keys...), u)...)
				if got := k.Key(r, u); got != want {
					t.Errorf("keys %v, unit %d, role %s: id %#x, want %#x", keys, u, r, got, want)
				}
			}
		}
	}
	k := run.Named("verify", 3)
	if a := testing.AllocsPerRun(100, func() { _ = k.Key(run.Draft, 12345) }); a != 0 {
		t.Errorf("Named keys allocate %v times per call, want 0", a)
	}
}

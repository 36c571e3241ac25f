package sim

import (
	"errors"
	"testing"
)

// TestPoolDerived: a slot keeps the value built for its key and serves it
// without building again; another key rebuilds it and replaces the value;
// slots are independent; an error is returned and not kept, and the
// value the slot held is dropped before another key's build (so a pool
// holds one world of a check, never two).
func TestPoolDerived(t *testing.T) {
	pl := NewPoolRows(1, [][]float32{{0.5, 0.5}, {0.25, 0.75}}, [][]float32{{0.5, 0.5}})
	builds := 0
	get := func(slot, key any, v int) int {
		t.Helper()
		got, err := pl.Derived(slot, key, func() (any, error) { builds++; return v, nil })
		if err != nil {
			t.Fatal(err)
		}
		return got.(int)
	}
	type a struct{}
	type b struct{}
	steps := []struct {
		slot, key   any
		v, want, nb int
	}{
		{a{}, 1, 10, 10, 1}, // built
		{a{}, 1, 11, 10, 1}, // kept
		{b{}, 1, 20, 20, 2}, // another slot
		{a{}, 2, 12, 12, 3}, // another key: rebuilt
		{a{}, 1, 13, 13, 4}, // the slot held key 2 only
		{b{}, 1, 21, 20, 4}, // slot b untouched
	}
	for i, s := range steps {
		if got := get(s.slot, s.key, s.v); got != s.want || builds != s.nb {
			t.Fatalf("step %d: got %d after %d builds, want %d after %d", i, got, builds, s.want, s.nb)
		}
	}
	boom := errors.New("boom")
	if _, err := pl.Derived(a{}, 3, func() (any, error) { return nil, boom }); !errors.Is(err, boom) {
		t.Fatalf("error %v, want boom", err)
	}
	if got := get(a{}, 1, 14); got != 14 || builds != 5 {
		t.Fatalf("after a failed build for another key the slot serves %d after %d builds; want 14 built anew (the old value goes before a build)", got, builds)
	}
}

package memcap

import "testing"

// fakeT records a failure instead of stopping the test.
type fakeT struct {
	testing.TB
	failed bool
}

func (f *fakeT) Helper()               {}
func (f *fakeT) Fatalf(string, ...any) { f.failed = true }

var sink []byte

// Cap passes a small decode and catches a large allocation, even one
// freed before Cap looks.
func TestCap(t *testing.T) {
	ok := &fakeT{TB: t}
	Cap(ok, 1<<20, "small", func() { sink = make([]byte, 1<<10) })
	big := &fakeT{TB: t}
	Cap(big, 1<<20, "big", func() { b := make([]byte, 8<<20); b[0] = 1; sink = nil })
	if ok.failed || !big.failed {
		t.Errorf("small failed %v, big failed %v", ok.failed, big.failed)
	}
}

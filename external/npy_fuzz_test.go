package external

import (
	"bufio"
	"bytes"
	"fmt"
	"testing"

	"github.com/specsim/specsim/internal/memcap"
)

// FuzzNpy feeds frames to readNpy as the harness reads a reply: with the
// shape the batch expects ([4 5] here), checked from the header before
// the data is allocated. It never panics, never allocates more than
// memcap's cap (the header can declare 2^30 elements), and a frame it
// accepts has the expected shape and as many values. Its seeds include
// issue 23's frame declaring 2e7 × 5 int64 and headers of every dtype.
// Run:
//
//	go test ./external -run '^$' -fuzz FuzzNpy -fuzztime 1m
func FuzzNpy(f *testing.F) {
	var ok, f32, huge bytes.Buffer
	writeI64(&ok, []int{4, 5}, make([]int64, 20), nil)
	writeF32(&f32, []int{4, 5}, make([]float32, 20), nil)
	writeNpyHeader(&huge, "<i8", []int{20000000, 5})
	huge.Write(make([]byte, 4096))
	f.Add(ok.Bytes())
	f.Add(f32.Bytes())
	f.Add(huge.Bytes())
	for _, h := range []string{
		"{'descr': '<u1', 'fortran_order': False, 'shape': (4, 5), }",
		"{'descr': '<f2', 'fortran_order': True, 'shape': (4, 5), }",
		"{'descr': '>i8', 'fortran_order': False, 'shape': (4, 5), }",
		"{'descr': '<i8', 'fortran_order': False, 'shape': (1073741824, 1073741824), }",
		"{'descr': '<i8', 'fortran_order': False, 'shape': (-4, -5), }",
		"{'shape': (4, 5), 'descr': '|b1', 'fortran_order': False}",
	} {
		var b bytes.Buffer
		b.WriteString(npyMagic)
		b.Write([]byte{byte(len(h) + 1), 0})
		b.WriteString(h + "\n")
		b.Write(make([]byte, 160))
		f.Add(b.Bytes())
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		memcap.Cap(t, memcap.DefaultLimit, fmt.Sprintf("a frame of %d bytes", len(b)), func() {
			var a array
			_, err := readNpy(bufio.NewReader(bytes.NewReader(b)), &a, nil, 4, 5)
			if err != nil {
				return
			}
			if len(a.Shape) != 2 || a.Shape[0] != 4 || a.Shape[1] != 5 || len(a.I64)+len(a.F32) != 20 {
				t.Fatalf("accepted shape %v with %d+%d values", a.Shape, len(a.I64), len(a.F32))
			}
		})
	})
}

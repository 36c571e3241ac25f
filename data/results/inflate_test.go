package results_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/parquet-go/parquet-go/format"

	"github.com/specsim/specsim/data/results"
	"github.com/specsim/specsim/data/results/bombtest"
	"github.com/specsim/specsim/internal/memcap"
	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/table"
)

// bombBase writes a results table of 100 float rows and returns its bytes
// and the size its "m" column's page declares uncompressed.
func bombBase(t *testing.T) []byte {
	t.Helper()
	var rows []table.Row
	for i := range 100 {
		rows = append(rows, table.Row{{K: "m", V: float64(i) / 7}})
	}
	p := filepath.Join(t.TempDir(), "t.parquet")
	if err := results.WriteFile(p, rows, results.Meta{results.KeyKind: "merged", results.KeyExperiment: "x"}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Issue 30, H3: compression ratios by construction. For each codec
// (zstd with and without a declared frame size, gzip, snappy) and each
// expansion of the planted page (below, at, and 2× to 64 MiB past the
// size its header declares), Read refuses every page that expands past
// its header with an error matching ErrBomb and sim.ErrMemBudget, having
// decompressed at most one byte past the declared size (memory capped
// at memcap.DefaultLimit), and never calls an honest page a bomb.
func TestDecompressionBombs(t *testing.T) {
	base := bombBase(t)
	const declared = 800 // 100 float64 values, plain
	for _, c := range []struct {
		codec format.CompressionCodec
		fcs   bool
	}{{format.Zstd, true}, {format.Zstd, false}, {format.Gzip, false}, {format.Snappy, false}} {
		for _, expand := range []int64{declared / 2, declared, 2 * declared, 1 << 20, 64 << 20} {
			name := fmt.Sprintf("%v-fcs=%v-%d", c.codec, c.fcs, expand)
			if c.codec == format.Snappy && expand > 1<<20 {
				continue // snappy's best ratio makes 64 MiB a 3 MB file; 1 MiB already proves the rule
			}
			payload, err := bombtest.Payload(c.codec, expand, c.fcs)
			if err != nil {
				t.Fatal(err)
			}
			b, err := bombtest.Plant(base, 0, c.codec, payload)
			if err != nil {
				t.Fatal(err)
			}
			memcap.Cap(t, memcap.DefaultLimit, name, func() {
				_, err = results.Read(bytes.NewReader(b), int64(len(b)))
			})
			bomb := errors.Is(err, results.ErrBomb) && errors.Is(err, sim.ErrMemBudget)
			if want := expand > declared; bomb != want {
				t.Errorf("%s (%d compressed bytes): bomb %v, want %v: %v", name, len(payload), bomb, want, err)
			}
		}
	}
}

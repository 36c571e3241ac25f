package results

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/specsim/specsim/internal/memcap"
	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/table"
)

// FuzzRead feeds damaged results tables to Read under a 16 MiB budget: it
// returns a table or an error, never panics, and never allocates in
// proportion to what the file declares (memcap's cap per input). Its
// seeds include issue 23's cases: a table declaring many rows of nulls in
// a few KB, and footers whose lists declare more elements than they
// hold. Run:
//
//	go test ./data/results -run '^$' -fuzz FuzzRead -fuzztime 2m
func FuzzRead(f *testing.F) {
	var good, many bytes.Buffer
	rows := []table.Row{{{K: "experiment", V: "x"}, {K: "algo", V: "token"}, {K: "alpha", V: 0.5}, {K: "n", V: int64(3)}, {K: "ok", V: true}}}
	if err := Write(&good, rows, Meta{KeyKind: "merged", KeyExperiment: "x", KeySpec: `{"axes":[{"name":"algo"}]}`}); err != nil {
		f.Fatal(err)
	}
	nulls := make([]table.Row, 200_000)
	for i := range nulls {
		nulls[i] = table.Row{{K: "experiment", V: "x"}}
	}
	nulls[0] = append(nulls[0], table.KV{K: "alpha", V: 1.0})
	if err := Write(&many, nulls, Meta{KeyKind: "merged"}); err != nil {
		f.Fatal(err)
	}
	g := good.Bytes()
	f.Add(g)
	f.Add(many.Bytes())
	f.Add(g[:len(g)/2])
	for _, at := range []int{len(g) - 12, len(g) - 30, len(g) - 60, len(g) / 2} {
		b := bytes.Clone(g)
		b[at] = 0xfc // a list header declaring a huge size in compact Thrift
		f.Add(b)
	}
	f.Add([]byte("PAR1\x15\x00PAR1"))
	f.Fuzz(func(t *testing.T, b []byte) {
		SetMemBudget(16 << 20)
		defer SetMemBudget(0)
		memcap.Cap(t, memcap.DefaultLimit, fmt.Sprintf("a table of %d bytes", len(b)), func() {
			tab, err := Read(bytes.NewReader(b), int64(len(b)))
			if err != nil {
				if strings.TrimSpace(err.Error()) == "" {
					t.Fatal("an empty error")
				}
				return
			}
			if _, err := Columns(tab.Rows); err != nil && !errors.Is(err, sim.ErrMemBudget) {
				return // a column of two types is the file's, reported by Columns
			}
		})
	})
}

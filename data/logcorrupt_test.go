package data_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/specsim/specsim/algos"
	"github.com/specsim/specsim/data"
	"github.com/specsim/specsim/internal/memcap"
	"github.com/specsim/specsim/sim"

	"github.com/parquet-go/parquet-go/compress/zstd"
)

// validLog returns the bytes of a small valid log (dense, 3 row groups).
func validLog(t testing.TB, sparse int) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := data.NewWriter(&buf, data.WriterOptions{Sparse: sparse, RowGroupBytes: 400, Provenance: data.BuildProvenance("test", "markov", 1)})
	pair := markovPair(t, "markov:V=4,order=1,a=0.5,quality=0.5,seed=7")
	if err := data.LogRun(context.Background(), w, pair, "p", "q",
		data.RunConfig{Steps: 12, Gamma: 2, Seed: 1, Sampling: data.Sampling{Temperature: 1, TopP: 1}, Rule: algos.Token{}}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// readAll reads every step of b and returns the error (nil for a valid
// log). It must never panic.
func readAll(b []byte) (int, error) {
	r, err := data.NewReader(bytes.NewReader(b), int64(len(b)), data.ReadOptions{})
	if err != nil {
		return 0, err
	}
	n := 0
	for r.Next() {
		n++
	}
	return n, r.Err()
}

func TestCorruptFiles(t *testing.T) {
	good := validLog(t, 0)
	if n, err := readAll(good); err != nil || n != 12 {
		t.Fatalf("valid log: %d rows, %v", n, err)
	}
	cases := map[string][]byte{
		"empty":          {},
		"text":           []byte("step,gamma\n1,2\n"),
		"magic only":     []byte("PAR1"),
		"bad head magic": append([]byte("XXXX"), good[4:]...),
		"bad tail magic": append(append([]byte(nil), good[:len(good)-4]...), "XXXX"...),
		"footer length":  func() []byte { b := bytes.Clone(good); b[len(b)-8] ^= 0xff; b[len(b)-5] = 0x7f; return b }(),
	}
	for _, cut := range []int{8, 100, len(good) / 3, len(good) / 2, len(good) - 200, len(good) - 9, len(good) - 1} {
		cases["truncated at "+itoa(cut)] = good[:cut]
	}
	for name, b := range cases {
		n, err := readAll(b)
		if err == nil {
			t.Errorf("%s: read %d rows without error", name, n)
			continue
		}
		if !errors.Is(err, data.ErrCorrupt) && !errors.Is(err, data.ErrInvalid) {
			t.Errorf("%s: error %v wraps neither ErrCorrupt nor ErrInvalid", name, err)
		}
	}
	// Flipped bytes inside the data pages: an error or (where the flip
	// lands in a value that stays valid) a clean read, never a panic.
	for off := 4; off < len(good)-8; off += 41 {
		b := bytes.Clone(good)
		b[off] ^= 0x5a
		readAll(b)
	}
}

func itoa(i int) string { return strings.TrimSpace(strings.Repeat(" ", 0) + fmtInt(i)) }

func fmtInt(i int) string {
	if i == 0 {
		return "0"
	}
	s := ""
	for ; i > 0; i /= 10 {
		s = string(rune('0'+i%10)) + s
	}
	return s
}

// goodRow is a valid dense row: V = 3, γ = 1.
func goodRow() data.LogRow {
	return data.LogRow{SchemaVersion: 1, RunID: "r", PromptID: 0, Step: 4, Gamma: 1, VocabSize: 3,
		DraftTokens: []int32{1}, Emitted: []int32{1, 2}, TargetModel: "t", DraftModel: "d",
		Temperature: 1, TopP: 1, RowKind: data.KindProbs, Layout: data.LayoutDense,
		Q: []float32{0.2, 0.5, 0.3}, P: []float32{0.3, 0.3, 0.4, 0.1, 0.1, 0.8}}
}

func writeRows(t *testing.T, rows []data.LogRow, kv ...string) []byte {
	t.Helper()
	var buf bytes.Buffer
	var opts []parquet.WriterOption
	for i := 0; i+1 < len(kv); i += 2 {
		opts = append(opts, parquet.KeyValueMetadata(kv[i], kv[i+1]))
	}
	w := parquet.NewGenericWriter[data.LogRow](&buf, opts...)
	if _, err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestInvalidRows: every invalid row is reported as a *StepError naming
// the row, the step and the field.
func TestInvalidRows(t *testing.T) {
	nan := float32(math.NaN())
	cases := []struct {
		name, field string
		mod         func(r *data.LogRow)
	}{
		{"short q", "q", func(r *data.LogRow) { r.Q = r.Q[:2] }},
		{"long p", "p", func(r *data.LogRow) { r.P = append(r.P, 0) }},
		{"NaN in p", "p", func(r *data.LogRow) { r.P[1] = nan }},
		{"negative q", "q", func(r *data.LogRow) { r.Q[0], r.Q[1] = -0.1, 0.8 }},
		{"unnormalised p", "p", func(r *data.LogRow) { r.P[0] = 0.9 }},
		{"draft with q = 0", "q", func(r *data.LogRow) { r.Q = []float32{0.5, 0, 0.5} }},
		{"draft out of range", "draft_tokens", func(r *data.LogRow) { r.DraftTokens[0] = 3 }},
		{"draft count", "draft_tokens", func(r *data.LogRow) { r.DraftTokens = []int32{1, 1} }},
		{"emitted not a draft prefix", "emitted_tokens", func(r *data.LogRow) { r.Emitted = []int32{0, 2} }},
		{"too many emitted", "emitted_tokens", func(r *data.LogRow) { r.Emitted = []int32{1, 2, 2} }},
		{"schema version", "schema_version", func(r *data.LogRow) { r.SchemaVersion = 2 }},
		{"gamma 0", "gamma", func(r *data.LogRow) { r.Gamma = 0 }},
		{"vocab 1", "vocab_size", func(r *data.LogRow) { r.VocabSize = 1 }},
		{"vocab 2e9 (issue 12: replay grew to 24 GB)", "vocab_size", func(r *data.LogRow) { r.VocabSize = 2e9 }},
		{"vocab above MaxVocab", "vocab_size", func(r *data.LogRow) { r.VocabSize = data.MaxVocab + 1 }},
		{"γ·V above the memory budget", "vocab_size", func(r *data.LogRow) { r.Gamma, r.VocabSize = 64, data.MaxVocab }},
		{"no emitted tokens", "emitted_tokens", func(r *data.LogRow) { r.Emitted = []int32{} }},
		{"row kind", "row_kind", func(r *data.LogRow) { r.RowKind = "softmax" }},
		{"layout", "layout", func(r *data.LogRow) { r.Layout = "csr" }},
		{"top_p 0", "sampling", func(r *data.LogRow) { r.TopP = 0 }},
		{"negative temperature", "sampling", func(r *data.LogRow) { r.Temperature = -1 }},
		{"+Inf logit", "p", func(r *data.LogRow) { r.RowKind = data.KindLogits; r.P[2] = float32(math.Inf(1)) }},
		{"logit draft filtered out", "q", func(r *data.LogRow) {
			r.RowKind, r.TopK = data.KindLogits, 1
			r.Q = []float32{2, 1, 0}
		}},
		{"sparse index order", "q_index", func(r *data.LogRow) {
			r.Layout, r.Q, r.P = data.LayoutSparse, nil, nil
			r.QNNZ, r.QIndex, r.QValue, r.QTail = []int32{2}, []int32{2, 1}, []float32{0.3, 0.5}, []float32{0.2}
			r.PNNZ, r.PIndex, r.PValue, r.PTail = []int32{1, 1}, []int32{1, 2}, []float32{0.5, 0.5}, []float32{0.5, 0.5}
		}},
		{"sparse tail", "q_tail", func(r *data.LogRow) {
			r.Layout, r.Q, r.P = data.LayoutSparse, nil, nil
			r.QNNZ, r.QIndex, r.QValue, r.QTail = []int32{1}, []int32{1}, []float32{0.5}, []float32{-0.5}
			r.PNNZ, r.PIndex, r.PValue, r.PTail = []int32{1, 1}, []int32{1, 2}, []float32{0.5, 0.5}, []float32{0.5, 0.5}
		}},
	}
	for _, c := range cases {
		bad := goodRow()
		c.mod(&bad)
		rows := []data.LogRow{goodRow(), bad}
		_, err := readAll(writeRows(t, rows))
		var se *data.StepError
		if !errors.As(err, &se) {
			t.Errorf("%s: error %v is not a StepError", c.name, err)
			continue
		}
		if se.Field != c.field || se.Row != 1 || se.Step != 4 || !errors.Is(err, data.ErrInvalid) {
			t.Errorf("%s: got field %q row %d step %d (%v); want field %q row 1 step 4", c.name, se.Field, se.Row, se.Step, err, c.field)
		}
	}
	// A vocabulary change between rows.
	other := goodRow()
	other.VocabSize, other.Q, other.P = 2, []float32{0.5, 0.5}, []float32{0.5, 0.5, 0.5, 0.5}
	other.DraftTokens, other.Emitted = []int32{1}, []int32{1}
	var se *data.StepError
	if _, err := readAll(writeRows(t, []data.LogRow{goodRow(), other})); !errors.As(err, &se) || se.Field != "vocab_size" {
		t.Errorf("vocabulary mismatch: %v", err)
	}
	// File-level: unsupported schema version in the metadata, and a
	// parquet file of another schema.
	if _, err := readAll(writeRows(t, []data.LogRow{goodRow()}, data.MetaSchemaVersion, "7")); !errors.Is(err, data.ErrInvalid) || !strings.Contains(err.Error(), "not supported") {
		t.Errorf("schema version 7: %v", err)
	}
	type other2 struct {
		Step int64 `parquet:"step"`
	}
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[other2](&buf)
	w.Write([]other2{{1}})
	w.Close()
	if _, err := readAll(buf.Bytes()); !errors.Is(err, data.ErrInvalid) || !strings.Contains(err.Error(), "missing") {
		t.Errorf("other schema: %v", err)
	}
}

// FuzzReader feeds corrupted logs to the reader: it must return (an
// error or rows), never panic, and never allocate in proportion to what
// the file declares: under a 16 MiB budget, one input allocates at most
// memcap's cap. Its seeds include issue 23's log whose one row declares
// 2e7 floats in a few KB of zstd. Run:
//
//	go test ./data -run '^$' -fuzz FuzzReader -fuzztime 2m
func FuzzReader(f *testing.F) {
	good := validLog(f, 0)
	sparse := validLog(f, 1)
	f.Add(good)
	f.Add(sparse)
	f.Add(good[:len(good)/2])
	f.Add(good[:len(good)-10])
	b := bytes.Clone(good)
	b[len(b)/2] ^= 0xff
	f.Add(b)
	f.Add([]byte("PAR1PAR1"))
	f.Add(bigListLog(f, 20_000_000))
	f.Add(bigListLog(f, 1<<17)[:2000])
	f.Fuzz(func(t *testing.T, b []byte) {
		memcap.Cap(t, memcap.DefaultLimit, fmt.Sprintf("a log of %d bytes", len(b)), func() {
			r, err := data.NewReader(bytes.NewReader(b), int64(len(b)), data.ReadOptions{MemBudget: 16 << 20})
			if err != nil {
				if !errors.Is(err, data.ErrCorrupt) && !errors.Is(err, data.ErrInvalid) && !errors.Is(err, sim.ErrMemBudget) {
					t.Fatalf("open error %v wraps none of ErrCorrupt, ErrInvalid and ErrMemBudget", err)
				}
				return
			}
			defer r.Close()
			n := 0
			for r.Next() && n < 1000 {
				blk := r.Block()
				if err := blk.Check(); err != nil {
					t.Fatalf("row %d passed validation but its block is bad: %v", n, err)
				}
				n++
			}
			if err := r.Err(); err != nil && !errors.Is(err, data.ErrCorrupt) && !errors.Is(err, data.ErrInvalid) && !errors.Is(err, sim.ErrMemBudget) {
				t.Fatalf("error %v wraps none of ErrCorrupt, ErrInvalid and ErrMemBudget", err)
			}
		})
	})
}

// bigListLog is a log whose first row (V = 2, γ = 1) carries a p list of
// n floats, zstd-compressed: a few KB that declare n·4 bytes of rows.
func bigListLog(t testing.TB, n int) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[data.LogRow](&buf, parquet.Compression(&zstd.Codec{}),
		parquet.KeyValueMetadata(data.MetaSchemaVersion, strconv.Itoa(data.SchemaVersion)))
	rows := []data.LogRow{{SchemaVersion: int32(data.SchemaVersion), RunID: "r", Gamma: 1, VocabSize: 2, DraftTokens: []int32{0},
		Emitted: []int32{0}, RowKind: "probs", Layout: "dense", Temperature: 1, TopP: 1, Q: []float32{0.5, 0.5}, P: make([]float32, n)}}
	if _, err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

package data

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"

	"github.com/parquet-go/parquet-go"

	"github.com/specsim/specsim/data/results"
	"github.com/specsim/specsim/internal/diag"
	"github.com/specsim/specsim/internal/fsutil"
	"github.com/specsim/specsim/sim"
)

// ReadOptions configures a Reader.
type ReadOptions struct {
	// Bug plants a p/q processing mismatch (logs of logits only); the
	// default processes p and q identically.
	Bug Bug
	// MemBudget is the most bytes one step's rows may take in the reader
	// (0: sim.DefaultMemBudget); a log declaring a larger step is refused
	// with an error wrapping sim.ErrMemBudget.
	MemBudget int64
}

// Meta describes an opened log.
type Meta struct {
	Rows       int64
	RowGroups  int
	Size       int64
	Provenance Provenance
}

// Reader streams the steps of a log one row group at a time, in the style
// of bufio.Scanner:
//
//	r, err := data.Open(path, data.ReadOptions{})
//	...
//	defer r.Close()
//	for r.Next() {
//		st, blk := r.Step(), r.Block()
//		...
//	}
//	if err := r.Err(); err != nil { ... }
//
// Memory is bounded by one row group's pages plus one step, whatever the
// file size. Every step is validated (checkRow: shapes, NaN, negative
// probabilities, vocabulary, q(x_i) > 0, schema version) before Next
// returns true; the first problem stops the scan with a *StepError
// (wrapping ErrInvalid). Decoding failures wrap ErrCorrupt. A panic in the
// parquet decoder is recovered and reported as an ErrCorrupt error.
type Reader struct {
	opt    ReadOptions
	file   *os.File
	pf     *parquet.File
	meta   Meta
	groups []parquet.RowGroup
	// The decoder goroutine fills buffers from free and sends them on
	// full; Next hands the previous buffer back. At most prefetch+1 rows
	// are decoded ahead, so memory stays bounded.
	full    chan decoded
	free    chan []LogRow
	done    chan struct{}
	started bool
	cur     []LogRow
	row     int64
	v       int
	err     error

	step       Step
	blk        sim.Block
	rawQ, rawP [][]float32 // sparse expansion
	prQ, prP   [][]float32 // processed (logits), correctly
	bgQ, bgP   [][]float32 // processed with the planted bug
	tmp        []float32
	tr         Transformer
	tails      float64 // Σ tail mass over sparse rows (for the warning)
	sparseRows int64
}

// prefetch is the number of rows the decoder goroutine may run ahead.
const prefetch = 2

type decoded struct {
	buf []LogRow
	err error
}

// Open opens the log at path.
func Open(path string, opt ReadOptions) (*Reader, error) {
	return openLogFile(path, func(f *os.File, size int64) (*Reader, error) {
		r, err := NewReader(f, size, opt)
		if err == nil {
			r.file = f
		}
		return r, err
	})
}

// openLogFile opens path (a regular file, fsutil.Open) and hands it with
// its size to open; the file is closed when open fails, and otherwise
// belongs to what open returns.
func openLogFile[R any](path string, open func(f *os.File, size int64) (R, error)) (R, error) {
	var zero R
	f, err := fsutil.Open(path)
	if err != nil {
		return zero, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return zero, err
	}
	r, err := open(f, st.Size())
	if err != nil {
		f.Close()
		return zero, err
	}
	return r, nil
}

// NewReader reads a log of size bytes from ra.
func NewReader(ra io.ReaderAt, size int64, opt ReadOptions) (r *Reader, err error) {
	if _, err := ParseBug(string(opt.Bug)); err != nil {
		return nil, err
	}
	// the frame first: a damaged footer length makes parquet-go allocate
	// up to 4 GB before it fails (FuzzReader's seed 681510e628718efa)
	if err := results.CheckFrame(ra, size); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	pf, err := openLog(ra, size)
	if err != nil {
		return nil, fmt.Errorf("%w: %v (is it a complete parquet file?)", ErrCorrupt, err)
	}
	// every page's declared size against the budget, before a row is
	// decoded: a few KB of zstd can declare a list of 2e7 floats
	if err := results.CheckPages(ra, size, pf.Metadata(), opt.MemBudget); err != nil {
		if errors.Is(err, sim.ErrMemBudget) {
			return nil, err
		}
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	if v, ok := pf.Lookup(MetaSchemaVersion); ok && v == strconv.Itoa(TreeSchemaVersion) {
		return nil, fmt.Errorf("%w: %s = %s is a tree log; data.OpenTree reads it (this reader reads chain logs, version %d)", ErrInvalid, MetaSchemaVersion, v, SchemaVersion)
	}
	have := map[string]bool{}
	for _, f := range pf.Schema().Fields() {
		have[f.Name()] = true
	}
	for _, c := range Columns {
		if !have[c] {
			return nil, fmt.Errorf("%w: column %s is missing; this is not a specsim log (schema version %d)", ErrInvalid, c, SchemaVersion)
		}
	}
	var keys []string
	for _, kv := range pf.Metadata().KeyValueMetadata {
		keys = append(keys, kv.Key)
	}
	if v, ok := pf.Lookup(MetaSchemaVersion); ok && v != strconv.Itoa(SchemaVersion) {
		return nil, fmt.Errorf("%w: %s = %s is not supported; this reader reads version %d", ErrInvalid, MetaSchemaVersion, v, SchemaVersion)
	}
	r = &Reader{opt: opt, pf: pf, groups: pf.RowGroups()}
	r.meta = Meta{Rows: pf.NumRows(), RowGroups: len(r.groups), Size: size, Provenance: provenanceFrom(pf.Lookup, keys)}
	return r, nil
}

// Meta returns the file's row count, row groups, size and provenance.
func (r *Reader) Meta() Meta { return r.meta }

// Err returns the first error met, or nil at a clean end of file.
func (r *Reader) Err() error { return r.err }

// Close closes the file opened by Open.
func (r *Reader) Close() error {
	if r.started && r.done != nil {
		close(r.done)
		r.done = nil
		for range r.full {
		}
	}
	if r.file != nil {
		return r.file.Close()
	}
	return nil
}

// Row returns the 0-based index in the file of the current step.
func (r *Reader) Row() int64 { return r.row - 1 }

// Step returns the current step as logged (rows as stored: logits or
// probabilities; sparse rows expanded). It is valid until the next Next.
func (r *Reader) Step() *Step { return &r.step }

// Block returns the current step as a block of processed float32 rows:
// the rows themselves for probabilities, the transformed rows for logits.
// It is valid until the next Next.
func (r *Reader) Block() *sim.Block { return &r.blk }

// ProcP and ProcQ return the correctly processed float32 rows p_{i+1} and
// q_{i+1} of the current step: the block's rows differ from them only
// under a planted Bug. They are valid until the next Next.
func (r *Reader) ProcP(i int) []float32 {
	if r.step.Kind == KindLogits {
		return r.prP[i]
	}
	return r.step.P[i]
}

// ProcQ returns the correctly processed draft row q_{i+1}; see ProcP.
func (r *Reader) ProcQ(i int) []float32 {
	if r.step.Kind == KindLogits {
		return r.prQ[i]
	}
	return r.step.Q[i]
}

// Raw returns the decoded parquet row of the current step.
func (r *Reader) Raw() *LogRow { return &r.cur[0] }

// Warnings reports approximations met so far (sparse tails spread
// uniformly); they are not errors.
func (r *Reader) Warnings() diag.Warnings {
	if r.sparseRows == 0 {
		return nil
	}
	return diag.Warnings{fmt.Errorf("sparse rows: the tail mass (mean %.3g per row over %d rows) is spread uniformly over the tokens not stored; replay uses these approximate rows",
		r.tails/float64(r.sparseRows), r.sparseRows)}
}

// Resume clears a *StepError so that Next goes on with the following row
// (for validators that list several problems); it reports whether it did.
// Decoding errors cannot be resumed.
func (r *Reader) Resume() bool {
	var se *StepError
	if errors.As(r.err, &se) {
		r.err = nil
		return true
	}
	return false
}

// Next advances to the next step; it returns false at the end of the file
// or on the first error (see Err).
func (r *Reader) Next() (ok bool) {
	if r.err != nil {
		return false
	}
	if !r.started {
		r.start()
	}
	if r.cur != nil {
		r.free <- r.cur
		r.cur = nil
	}
	d, open := <-r.full
	if !open {
		return false
	}
	if d.err != nil {
		r.err = d.err
		return false
	}
	r.cur = d.buf
	row := r.row
	r.row++
	if err := r.load(row); err != nil {
		r.err = err
		return false
	}
	return true
}

// start launches the decoder goroutine. It decodes one row group at a
// time with parquet-go's generic reader; a decoder panic (corrupt input)
// is recovered and sent as an ErrCorrupt error.
func (r *Reader) start() {
	r.started = true
	r.full = make(chan decoded, prefetch)
	r.free = make(chan []LogRow, prefetch+2)
	r.done = make(chan struct{})
	for range prefetch + 1 {
		r.free <- make([]LogRow, 1)
	}
	groups, full, free, done := r.groups, r.full, r.free, r.done
	go func() {
		defer close(full)
		var row int64
		send := func(d decoded) bool {
			select {
			case full <- d:
				return true
			case <-done:
				return false
			}
		}
		for _, rg := range groups {
			rr := parquet.NewGenericRowGroupReader[LogRow](rg)
			for {
				var buf []LogRow
				select {
				case buf = <-free:
				case <-done:
					rr.Close()
					return
				}
				var n int
				var err error
				if perr := results.Guard(func() { n, err = rr.Read(buf) }); perr != nil {
					send(decoded{err: fmt.Errorf("%w: row %d: %v; the file is truncated or corrupt", ErrCorrupt, row, perr)})
					return
				}
				if n == 1 {
					row++
					if !send(decoded{buf: buf}) {
						rr.Close()
						return
					}
					continue
				}
				free <- buf
				rr.Close()
				if err == nil || errors.Is(err, io.EOF) {
					break
				}
				send(decoded{err: fmt.Errorf("%w: row %d: %v", ErrCorrupt, row, err)})
				return
			}
		}
	}()
}

// load validates the decoded row and fills step and blk.
func (r *Reader) load(row int64) error {
	lr := &r.cur[0]
	if err := checkRow(lr, row, r.v, r.opt.MemBudget); err != nil {
		return err
	}
	if row >= r.meta.Rows {
		return fmt.Errorf("%w: row %d beyond the %d rows the footer declares", ErrCorrupt, row, r.meta.Rows)
	}
	g, v := int(lr.Gamma), int(lr.VocabSize)
	r.v = v
	st := &r.step
	st.RunID, st.PromptID, st.Step = lr.RunID, lr.PromptID, lr.Step
	st.TargetModel, st.DraftModel, st.Kind = lr.TargetModel, lr.DraftModel, lr.RowKind
	st.Sampling = Sampling{Temperature: lr.Temperature, TopK: int(lr.TopK), TopP: lr.TopP, MinP: lr.MinP}
	st.Tokens = toInts(st.Tokens, lr.DraftTokens)
	st.Emitted = toInts(st.Emitted, lr.Emitted)
	st.Q, st.P = resize(st.Q, g), resize(st.P, g+1)
	if lr.Layout == LayoutDense {
		for i := range st.Q {
			st.Q[i] = lr.Q[i*v : (i+1)*v : (i+1)*v]
		}
		for i := range st.P {
			st.P[i] = lr.P[i*v : (i+1)*v : (i+1)*v]
		}
	} else {
		r.rawQ = sizeRows(r.rawQ, g, v)
		r.rawP = sizeRows(r.rawP, g+1, v)
		// expand fills the dense rows raw (and dst) from one side's
		// sparse columns, the row's entries following each other.
		expand := func(dst, raw [][]float32, nnz, idx []int32, val, tail []float32) {
			off := 0
			for i := range dst {
				n := int(nnz[i])
				expandSparse(raw[i], idx[off:off+n], val[off:off+n], tail[i])
				r.tails += float64(tail[i])
				dst[i] = raw[i]
				off += n
			}
		}
		expand(st.Q, r.rawQ, lr.QNNZ, lr.QIndex, lr.QValue, lr.QTail)
		expand(st.P, r.rawP, lr.PNNZ, lr.PIndex, lr.PValue, lr.PTail)
		r.sparseRows += int64(2*g + 1)
	}
	b := &r.blk
	b.Tokens = st.Tokens
	if len(b.Q) != g {
		b.Q, b.P = make([]sim.Row, g), make([]sim.Row, g+1)
	}
	if st.Kind == KindProbs {
		if r.opt.Bug != BugNone {
			return fmt.Errorf("%w: transform bug %s needs rows of raw logits, and this log stores probabilities", ErrInvalid, r.opt.Bug)
		}
		if st.Sampling.Greedy() {
			if err := oneHotRows(row, st); err != nil {
				return err
			}
		}
		for i := range st.Q {
			b.Q[i] = sim.F32(st.Q[i])
		}
		for i := range st.P {
			b.P[i] = sim.F32(st.P[i])
		}
		return nil
	}
	return r.transform(row)
}

// oneHotRows refuses a greedy step (temperature 0) of processed
// probabilities whose rows are not one-hot: such a file stores the models'
// rows before greedy decoding, and every test of its emitted tokens would
// judge an argmax engine against the soft rows and call it violated.
func oneHotRows(row int64, st *Step) error {
	for _, side := range []struct {
		name string
		rows [][]float32
	}{{"q", st.Q}, {"p", st.P}} {
		for i, r := range side.rows {
			if m := r[sim.ArgmaxRow(sim.F32(r))]; m < 1-RowSumTol {
				return &StepError{Row: row, RunID: st.RunID, PromptID: st.PromptID, Step: st.Step, Field: side.name,
					Msg: fmt.Sprintf("row %s_%d at temperature 0 is not one-hot (largest entry %.4g): row_kind probs stores the processed rows, one-hot under greedy decoding; store those, or log raw logits (row_kind logits) and the reader applies T = 0", side.name, i+1, m)}
			}
		}
	}
	return nil
}

// transform applies the step's sampling to every logit row (with the
// planted bug, if any) and checks q(x_i) > 0 on the processed rows.
func (r *Reader) transform(row int64) error {
	st, b := &r.step, &r.blk
	g, v := len(st.Tokens), len(st.P[0])
	r.prQ, r.prP = sizeRows(r.prQ, g, v), sizeRows(r.prP, g+1, v)
	bad := func(field, format string, a ...any) error {
		return &StepError{Row: row, RunID: st.RunID, PromptID: st.PromptID, Step: st.Step, Field: field, Msg: fmt.Sprintf(format, a...)}
	}
	identity := Sampling{Temperature: 1, TopP: 1}
	if r.opt.Bug != BugNone {
		r.bgQ, r.bgP = sizeRows(r.bgQ, g, v), sizeRows(r.bgP, g+1, v)
	}
	for i := range st.P {
		if err := r.tr.Apply(st.Sampling, r.prP[i], st.P[i]); err != nil {
			return bad("p", "row p_%d: %v", i+1, err)
		}
		b.P[i] = sim.F32(r.prP[i])
		if r.opt.Bug == BugPRaw {
			if err := r.tr.Apply(identity, r.bgP[i], st.P[i]); err != nil {
				return bad("p", "row p_%d: %v", i+1, err)
			}
			b.P[i] = sim.F32(r.bgP[i])
		}
	}
	for i, x := range st.Tokens {
		if err := r.tr.Apply(st.Sampling, r.prQ[i], st.Q[i]); err != nil {
			return bad("q", "row q_%d: %v", i+1, err)
		}
		if !(r.prQ[i][x] > 0) {
			return bad("q", "draft token %d at position %d has q = 0 after the transform (%s): it cannot have been drawn from q_%d", x, i, st.Sampling, i+1)
		}
		b.Q[i] = sim.F32(r.prQ[i])
		switch r.opt.Bug {
		case BugQRaw:
			if err := r.tr.Apply(identity, r.bgQ[i], st.Q[i]); err != nil {
				return bad("q", "row q_%d: %v", i+1, err)
			}
			b.Q[i] = sim.F32(r.bgQ[i])
		case BugQBF16:
			r.tmp = append(r.tmp[:0], st.Q[i]...)
			for k, l := range r.tmp {
				r.tmp[k] = bf16(l)
			}
			if err := r.tr.Apply(st.Sampling, r.bgQ[i], r.tmp); err != nil {
				return bad("q", "row q_%d: %v", i+1, err)
			}
			if !(r.bgQ[i][x] > 0) {
				// bf16 rounding pushed the drafted token out of the
				// filtered set: the buggy verifier would divide by zero;
				// keep the smallest positive float so the ratio is huge.
				r.bgQ[i][x] = math.SmallestNonzeroFloat32
			}
			b.Q[i] = sim.F32(r.bgQ[i])
		}
	}
	return nil
}

func toInts(dst []int, src []int32) []int {
	dst = dst[:0]
	for _, x := range src {
		dst = append(dst, int(x))
	}
	return dst
}

func resize(rows [][]float32, n int) [][]float32 {
	if cap(rows) < n {
		return make([][]float32, n)
	}
	return rows[:n]
}

func sizeRows(rows [][]float32, n, v int) [][]float32 {
	rows = resize(rows, n)
	for i := range rows {
		if cap(rows[i]) < v {
			rows[i] = make([]float32, v)
		}
		rows[i] = rows[i][:v]
	}
	return rows
}

// openLog opens a log's parquet footer (page index and Bloom filters
// skipped); a panic inside parquet-go is returned as an error.
func openLog(ra io.ReaderAt, size int64) (pf *parquet.File, err error) {
	if perr := results.Guard(func() {
		pf, err = parquet.OpenFile(ra, size, parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
	}); perr != nil {
		return nil, perr
	}
	return pf, err
}

// DecodeOnly decodes every row of a log with parquet-go's generic reader,
// one row group at a time, and does nothing else: no validation, no
// block (tree logs, with a node_parent column, as TreeLogRow). It is the
// I/O floor that replay's throughput is measured against. Every page is
// checked against budget bytes first (results.CheckPages: declared and
// measured sizes; 0 stands for sim.DefaultMemBudget). It returns the
// number of rows decoded.
func DecodeOnly(ra io.ReaderAt, size int64, budget int64) (n int64, err error) {
	if err := results.CheckFrame(ra, size); err != nil {
		return 0, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	pf, err := openLog(ra, size)
	if err != nil {
		return 0, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	if err := results.CheckPages(ra, size, pf.Metadata(), budget); err != nil {
		if errors.Is(err, sim.ErrMemBudget) {
			return 0, err
		}
		return 0, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	for _, f := range pf.Schema().Fields() {
		if f.Name() == "node_parent" {
			return decodeRows[TreeLogRow](pf)
		}
	}
	return decodeRows[LogRow](pf)
}

// decodeRows decodes every row of pf as a T, one row group at a time, and
// returns the number of rows decoded.
func decodeRows[T any](pf *parquet.File) (n int64, err error) {
	var buf [1]T
	for _, rg := range pf.RowGroups() {
		rr := parquet.NewGenericRowGroupReader[T](rg)
		for {
			var k int
			if perr := results.Guard(func() { k, err = rr.Read(buf[:]) }); perr != nil {
				rr.Close()
				return n, fmt.Errorf("%w: %v", ErrCorrupt, perr)
			}
			n += int64(k)
			if k == 0 {
				rr.Close()
				if err != nil && !errors.Is(err, io.EOF) {
					return n, fmt.Errorf("%w: %v", ErrCorrupt, err)
				}
				break
			}
		}
	}
	return n, nil
}

package data

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/parquet-go/parquet-go"

	"github.com/specsim/specsim/data/results"
	"github.com/specsim/specsim/internal/fsutil"
	"github.com/specsim/specsim/sim"
)

// TreeReader streams the steps of a tree log (TreeSchemaVersion) one row
// at a time, validating each (checkTreeRow) before Next returns true, as
// Reader does for chain logs:
//
//	r, err := data.OpenTree(path, data.ReadOptions{})
//	...
//	defer r.Close()
//	for r.Next() {
//		st := r.Step()
//		... r.ProcP(node), r.ProcQ(node) ...
//	}
//	if err := r.Err(); err != nil { ... }
//
// Memory is bounded by one row group's pages plus one step. Planted bugs
// (ReadOptions.Bug) are chain-only and refused.
type TreeReader struct {
	opt    ReadOptions
	file   *os.File
	meta   Meta
	groups []parquet.RowGroup
	g      int
	rr     *parquet.GenericReader[TreeLogRow]
	buf    [1]TreeLogRow
	row    int64
	v      int
	err    error
	step   TreeStep
	prQ    [][]float32
	prP    [][]float32
	tr     Transformer
}

// OpenTree opens the tree log at path.
func OpenTree(path string, opt ReadOptions) (*TreeReader, error) {
	return openLogFile(path, func(f *os.File, size int64) (*TreeReader, error) {
		r, err := NewTreeReader(f, size, opt)
		if err == nil {
			r.file = f
		}
		return r, err
	})
}

// NewTreeReader reads a tree log of size bytes from ra.
func NewTreeReader(ra io.ReaderAt, size int64, opt ReadOptions) (*TreeReader, error) {
	if opt.Bug != BugNone {
		return nil, fmt.Errorf("%w: planted bug %s replays chain logs; this is a tree log (schema version %d)", ErrInvalid, opt.Bug, TreeSchemaVersion)
	}
	pf, keys, err := openChecked(ra, size, opt.MemBudget)
	if err != nil {
		return nil, err
	}
	have := map[string]bool{}
	for _, f := range pf.Schema().Fields() {
		have[f.Name()] = true
	}
	for _, c := range TreeColumns {
		if !have[c] {
			return nil, fmt.Errorf("%w: column %s is missing; this is not a specsim tree log (schema version %d)", ErrInvalid, c, TreeSchemaVersion)
		}
	}
	if v, ok := pf.Lookup(MetaSchemaVersion); ok && v != strconv.Itoa(TreeSchemaVersion) {
		return nil, fmt.Errorf("%w: %s = %s is not a tree log; this reader reads version %d", ErrInvalid, MetaSchemaVersion, v, TreeSchemaVersion)
	}
	r := &TreeReader{opt: opt, groups: pf.RowGroups()}
	r.meta = Meta{Rows: pf.NumRows(), RowGroups: len(r.groups), Size: size, Provenance: provenanceFrom(pf.Lookup, keys)}
	return r, nil
}

// openChecked checks a log's frame, opens its footer and checks every
// page's declared size against budget; it returns the file and its
// metadata keys.
func openChecked(ra io.ReaderAt, size, budget int64) (*parquet.File, []string, error) {
	if err := results.CheckFrame(ra, size); err != nil {
		return nil, nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	pf, err := openLog(ra, size)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %v (is it a complete parquet file?)", ErrCorrupt, err)
	}
	if err := results.CheckPages(ra, size, pf.Metadata(), budget); err != nil {
		if errors.Is(err, sim.ErrMemBudget) {
			return nil, nil, err
		}
		return nil, nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	var keys []string
	for _, kv := range pf.Metadata().KeyValueMetadata {
		keys = append(keys, kv.Key)
	}
	return pf, keys, nil
}

// Meta returns the file's row count, row groups, size and provenance.
func (r *TreeReader) Meta() Meta { return r.meta }

// Err returns the first error met, or nil at a clean end of file.
func (r *TreeReader) Err() error { return r.err }

// Row returns the 0-based index in the file of the current step.
func (r *TreeReader) Row() int64 { return r.row - 1 }

// Step returns the current step as logged; it is valid until the next
// Next.
func (r *TreeReader) Step() *TreeStep { return &r.step }

// Raw returns the decoded parquet row of the current step.
func (r *TreeReader) Raw() *TreeLogRow { return &r.buf[0] }

// ProcP returns the processed target row of node n of the current step
// (the logged row for probabilities, the transformed one for logits).
func (r *TreeReader) ProcP(n int) []float32 { return r.prP[r.step.PRow[n]] }

// ProcQ returns the processed draft row of node n, or nil where the node
// has none.
func (r *TreeReader) ProcQ(n int) []float32 {
	if q := r.step.QRow[n]; q >= 0 {
		return r.prQ[q]
	}
	return nil
}

// Resume clears a *StepError so that Next goes on with the following row;
// it reports whether it did. Decoding errors cannot be resumed.
func (r *TreeReader) Resume() bool {
	var se *StepError
	if errors.As(r.err, &se) {
		r.err = nil
		return true
	}
	return false
}

// Close closes the file opened by OpenTree.
func (r *TreeReader) Close() error {
	if r.rr != nil {
		r.rr.Close()
		r.rr = nil
	}
	if r.file != nil {
		return r.file.Close()
	}
	return nil
}

// Next advances to the next step; it returns false at the end of the file
// or on the first error (see Err).
func (r *TreeReader) Next() bool {
	if r.err != nil {
		return false
	}
	if !r.decode() {
		return false
	}
	row := r.row
	r.row++
	if row >= r.meta.Rows {
		r.err = fmt.Errorf("%w: row %d beyond the %d rows the footer declares", ErrCorrupt, row, r.meta.Rows)
		return false
	}
	if err := r.load(row); err != nil {
		r.err = err
		return false
	}
	return true
}

// decode reads the next row into buf, moving to the next row group at the
// end of one; a decoder panic is an ErrCorrupt error.
func (r *TreeReader) decode() bool {
	for {
		if r.rr == nil {
			if r.g >= len(r.groups) {
				return false
			}
			r.rr = parquet.NewGenericRowGroupReader[TreeLogRow](r.groups[r.g])
			r.g++
		}
		var n int
		var err error
		if perr := results.Guard(func() { n, err = r.rr.Read(r.buf[:]) }); perr != nil {
			r.err = fmt.Errorf("%w: row %d: %v; the file is truncated or corrupt", ErrCorrupt, r.row, perr)
			return false
		}
		if n == 1 {
			return true
		}
		r.rr.Close()
		r.rr = nil
		if err != nil && !errors.Is(err, io.EOF) {
			r.err = fmt.Errorf("%w: row %d: %v", ErrCorrupt, r.row, err)
			return false
		}
	}
}

// load validates the decoded row and fills step and the processed rows.
func (r *TreeReader) load(row int64) error {
	lr := &r.buf[0]
	if err := checkTreeRow(lr, row, r.v, r.opt.MemBudget); err != nil {
		return err
	}
	v := int(lr.VocabSize)
	r.v = v
	st := &r.step
	st.RunID, st.PromptID, st.Step = lr.RunID, lr.PromptID, lr.Step
	st.TargetModel, st.DraftModel, st.Kind = lr.TargetModel, lr.DraftModel, lr.RowKind
	st.Sampling = Sampling{Temperature: lr.Temperature, TopK: int(lr.TopK), TopP: lr.TopP, MinP: lr.MinP}
	st.Parent, st.Token = toInts(st.Parent, lr.NodeParent), toInts(st.Token, lr.NodeToken)
	st.QRow, st.PRow = toInts(st.QRow, lr.NodeQ), toInts(st.PRow, lr.NodeP)
	st.Path, st.Emitted = toInts(st.Path, lr.Path), toInts(st.Emitted, lr.Emitted)
	st.Q, st.P = resize(st.Q, len(lr.Q)/v), resize(st.P, len(lr.P)/v)
	for i := range st.Q {
		st.Q[i] = lr.Q[i*v : (i+1)*v : (i+1)*v]
	}
	for i := range st.P {
		st.P[i] = lr.P[i*v : (i+1)*v : (i+1)*v]
	}
	if st.Kind == KindProbs {
		if st.Sampling.Greedy() {
			if err := oneHotRows(row, &Step{RunID: st.RunID, PromptID: st.PromptID, Step: st.Step, Q: st.Q, P: st.P}); err != nil {
				return err
			}
		}
		r.prQ, r.prP = st.Q, st.P
		return nil
	}
	bad := func(field, format string, a ...any) error {
		return &StepError{Row: row, RunID: st.RunID, PromptID: st.PromptID, Step: st.Step, Field: field, Msg: fmt.Sprintf(format, a...)}
	}
	r.prQ, r.prP = sizeRows(r.prQ, len(st.Q), v), sizeRows(r.prP, len(st.P), v)
	for i := range st.P {
		if err := r.tr.Apply(st.Sampling, r.prP[i], st.P[i]); err != nil {
			return bad("p", "row %d: %v", i, err)
		}
	}
	for i := range st.Q {
		if err := r.tr.Apply(st.Sampling, r.prQ[i], st.Q[i]); err != nil {
			return bad("q", "row %d: %v", i, err)
		}
	}
	for i := 1; i < len(st.Parent); i++ {
		if q := st.QRow[st.Parent[i]]; q >= 0 && !(r.prQ[q][st.Token[i]] > 0) {
			return bad("node_token", "node %d: token %d has q = 0 in its parent node %d's draft row %d after the transform (%s): it cannot have been drawn from it",
				i, st.Token[i], st.Parent[i], q, st.Sampling)
		}
	}
	return nil
}

// LogVersion returns the schema version of the log at path, from its
// specsim.schema_version metadata, or else from its columns (a node_parent
// column: TreeSchemaVersion; else SchemaVersion). Errors are those of
// opening the file (ErrCorrupt for a file that is not parquet).
func LogVersion(path string) (int, error) {
	f, err := fsutil.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	if err := results.CheckFrame(f, st.Size()); err != nil {
		return 0, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	pf, err := openLog(f, st.Size())
	if err != nil {
		return 0, fmt.Errorf("%w: %v (is it a complete parquet file?)", ErrCorrupt, err)
	}
	if v, ok := pf.Lookup(MetaSchemaVersion); ok {
		if n, err := strconv.Atoi(v); err == nil {
			return n, nil
		}
	}
	for _, fl := range pf.Schema().Fields() {
		if fl.Name() == "node_parent" {
			return TreeSchemaVersion, nil
		}
	}
	return SchemaVersion, nil
}

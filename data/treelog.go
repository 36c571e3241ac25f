package data

import (
	"bufio"
	"fmt"
	"io"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/snappy"

	"github.com/specsim/specsim/internal/fsutil"
	"github.com/specsim/specsim/sim"
)

// TreeSchemaVersion is the schema version of tree step logs: version 1
// (SchemaVersion) extended with the draft tree of each step. A file holds
// steps of one version, named by its specsim.schema_version metadata and
// by every row's schema_version; chain logs are still written as
// version 1, unchanged.
const TreeSchemaVersion = 2

// TreeLogRow is one tree step as stored in parquet, one row per step. It
// keeps version 1's header columns with their meaning (gamma becomes the
// tree's depth: a chain of γ tokens is a tree of depth γ) and stores the
// tree node by node, node 0 being the root (the position right after the
// context):
//
//	schema_version  INT32            TreeSchemaVersion (2)
//	run_id, prompt_id, step, vocab_size, target_model, draft_model,
//	temperature, top_k, top_p, min_p, row_kind   as in LogRow
//	gamma           INT32            the tree's depth (its deepest node's)
//	layout          BYTE_ARRAY UTF8  "dense" (the only tree layout)
//	node_parent     LIST<INT32>      per node its parent (-1 at the root);
//	                                 a parent comes before its children
//	node_token      LIST<INT32>      per node the token it appends to its
//	                                 parent's path (-1 at the root)
//	node_q          LIST<INT32>      per node the index in q of its draft
//	                                 row, the law its children were drawn
//	                                 from (-1: none, for leaves and
//	                                 children chosen without a law)
//	node_p          LIST<INT32>      per node the index in p of its target
//	                                 row p(.|path to the node)
//	q, p            LIST<FLOAT>      the rows, row-major, V entries each
//	path            LIST<INT32>      the accepted nodes, the root's child
//	                                 first; each is a child of the one before
//	emitted_tokens  LIST<INT32>      the tokens of path, then the extra
//	                                 (correction or bonus) token drawn at
//	                                 the path's last node
//
// A row may be shared by several nodes (node_p and node_q are indices).
type TreeLogRow struct {
	SchemaVersion int32     `parquet:"schema_version" json:"schema_version"`
	RunID         string    `parquet:"run_id,dict" json:"run_id"`
	PromptID      int64     `parquet:"prompt_id" json:"prompt_id"`
	Step          int64     `parquet:"step" json:"step"`
	Gamma         int32     `parquet:"gamma" json:"gamma"`
	VocabSize     int32     `parquet:"vocab_size" json:"vocab_size"`
	Emitted       []int32   `parquet:"emitted_tokens,list" json:"emitted_tokens"`
	TargetModel   string    `parquet:"target_model,dict" json:"target_model"`
	DraftModel    string    `parquet:"draft_model,dict" json:"draft_model"`
	Temperature   float64   `parquet:"temperature" json:"temperature"`
	TopK          int32     `parquet:"top_k" json:"top_k"`
	TopP          float64   `parquet:"top_p" json:"top_p"`
	MinP          float64   `parquet:"min_p" json:"min_p"`
	RowKind       string    `parquet:"row_kind,dict" json:"row_kind"`
	Layout        string    `parquet:"layout,dict" json:"layout"`
	Q             []float32 `parquet:"q,list" json:"q"`
	P             []float32 `parquet:"p,list" json:"p"`
	NodeParent    []int32   `parquet:"node_parent,list" json:"node_parent"`
	NodeToken     []int32   `parquet:"node_token,list" json:"node_token"`
	NodeQ         []int32   `parquet:"node_q,list" json:"node_q"`
	NodeP         []int32   `parquet:"node_p,list" json:"node_p"`
	Path          []int32   `parquet:"path,list" json:"path"`
}

// TreeColumns lists the column names of TreeLogRow in schema order; a
// tree log missing any of them is refused.
var TreeColumns = []string{"schema_version", "run_id", "prompt_id", "step", "gamma", "vocab_size", "emitted_tokens",
	"target_model", "draft_model", "temperature", "top_k", "top_p", "min_p", "row_kind", "layout", "q", "p",
	"node_parent", "node_token", "node_q", "node_p", "path"}

// TreeStep is one tree step in memory: the header fields, the tree node
// by node (Parent, Token, QRow and PRow per node, -1 where TreeLogRow
// has -1), the rows as logged (probabilities or logits, per Kind), the
// accepted Path and the Emitted tokens.
type TreeStep struct {
	RunID                   string
	PromptID, Step          int64
	TargetModel, DraftModel string
	Sampling                Sampling
	Kind                    string
	Parent, Token           []int
	QRow, PRow              []int
	Q, P                    [][]float32
	Path, Emitted           []int
}

// Nodes returns the number of nodes, root included.
func (s *TreeStep) Nodes() int { return len(s.Parent) }

// FromTree fills s (header fields kept) with tree t verified to outcome o:
// one target row per node, one draft row per node that has one, the path
// from the root to o.Node and its tokens followed by o.Next (when it is
// not sim.NoToken). Rows are stored as float32 probabilities (Kind
// KindProbs).
func (s *TreeStep) FromTree(t *sim.Tree, o sim.TreeOutcome) {
	n := len(t.Nodes)
	s.Kind = KindProbs
	s.Parent, s.Token, s.QRow, s.PRow = s.Parent[:0], s.Token[:0], s.QRow[:0], s.PRow[:0]
	s.Q, s.P = s.Q[:0], s.P[:0]
	for i := range n {
		nd := &t.Nodes[i]
		tok := nd.Token
		if i == 0 {
			tok = -1
		}
		s.Parent, s.Token = append(s.Parent, nd.Parent), append(s.Token, tok)
		s.PRow = append(s.PRow, len(s.P))
		s.P = append(s.P, rowF32(nd.P, t.V))
		q := -1
		if !nd.Q.IsZero() {
			q = len(s.Q)
			s.Q = append(s.Q, rowF32(nd.Q, t.V))
		}
		s.QRow = append(s.QRow, q)
	}
	d := t.Nodes[o.Node].Depth
	s.Path = append(s.Path[:0], make([]int, d)...)
	s.Emitted = s.Emitted[:0]
	for k, m := d-1, o.Node; k >= 0; k, m = k-1, t.Nodes[m].Parent {
		s.Path[k] = m
	}
	for _, m := range s.Path {
		s.Emitted = append(s.Emitted, t.Nodes[m].Token)
	}
	if o.Next != sim.NoToken {
		s.Emitted = append(s.Emitted, o.Next)
	}
}

func rowF32(r sim.Row, v int) []float32 {
	out := make([]float32, v)
	for x := range out {
		out[x] = float32(r.At(x))
	}
	return out
}

// TreeWriter writes a tree log, one TreeLogRow per Write.
type TreeWriter struct {
	buf *bufio.Writer
	opt WriterOptions
	pw  *parquet.GenericWriter[TreeLogRow]
	row [1]TreeLogRow
	v   int
	n   int64
}

// WriteTreeLog writes a tree log to path atomically, as WriteLog does for
// chain logs. Only dense rows are written (opt.Sparse must be 0).
func WriteTreeLog(path string, opt WriterOptions, fill func(w *TreeWriter) error) error {
	if opt.Sparse > 0 {
		return fmt.Errorf("%w: tree logs store dense rows; sparse storage (%d entries per row) is for chain logs", ErrInvalid, opt.Sparse)
	}
	return fsutil.WriteFile(path, func(out io.Writer) error {
		w := NewTreeWriter(out, opt)
		if err := fill(w); err != nil {
			return err
		}
		return w.Close()
	})
}

// NewTreeWriter returns a TreeWriter to out; Close flushes but does not
// close out.
func NewTreeWriter(out io.Writer, opt WriterOptions) *TreeWriter {
	if opt.RowGroupBytes <= 0 {
		opt.RowGroupBytes = 16 << 20
	}
	return &TreeWriter{opt: opt, buf: bufio.NewWriterSize(out, 1<<20)}
}

// Rows returns the number of rows written.
func (w *TreeWriter) Rows() int64 { return w.n }

// Write validates s and appends it as one row.
func (w *TreeWriter) Write(s *TreeStep) error {
	r := &w.row[0]
	*r = TreeLogRow{SchemaVersion: TreeSchemaVersion, RunID: s.RunID, PromptID: s.PromptID, Step: s.Step,
		TargetModel: s.TargetModel, DraftModel: s.DraftModel, Temperature: s.Sampling.Temperature,
		TopK: int32(s.Sampling.TopK), TopP: s.Sampling.TopP, MinP: s.Sampling.MinP, RowKind: s.Kind, Layout: LayoutDense,
		Emitted: appendInt32(r.Emitted[:0], s.Emitted), NodeParent: appendInt32(r.NodeParent[:0], s.Parent),
		NodeToken: appendInt32(r.NodeToken[:0], s.Token), NodeQ: appendInt32(r.NodeQ[:0], s.QRow),
		NodeP: appendInt32(r.NodeP[:0], s.PRow), Path: appendInt32(r.Path[:0], s.Path), Q: r.Q[:0], P: r.P[:0]}
	if len(s.P) == 0 {
		return fmt.Errorf("data: tree step %d has no target row; every node needs one", s.Step)
	}
	r.VocabSize = int32(len(s.P[0]))
	for _, row := range s.Q {
		r.Q = append(r.Q, row...)
	}
	for _, row := range s.P {
		r.P = append(r.P, row...)
	}
	depth := make([]int, len(s.Parent))
	for i, p := range s.Parent {
		if i > 0 && p >= 0 && p < i {
			depth[i] = depth[p] + 1
			r.Gamma = max(r.Gamma, int32(depth[i]))
		}
	}
	return w.WriteRow(r)
}

// WriteRow validates a TreeLogRow (as decoded from the Python logger's
// JSON lines) and appends it.
func (w *TreeWriter) WriteRow(r *TreeLogRow) error {
	if err := checkTreeRow(r, w.n, w.v, w.opt.MemBudget); err != nil {
		return err
	}
	if w.pw == nil {
		w.v = int(r.VocabSize)
		per := 4 * max(1, len(r.P)+len(r.Q))
		w.pw = parquet.NewGenericWriter[TreeLogRow](w.buf, w.options(max(1, int64(w.opt.RowGroupBytes/per)))...)
	}
	if r != &w.row[0] {
		w.row[0] = *r
	}
	if _, err := w.pw.Write(w.row[:]); err != nil {
		return err
	}
	w.n++
	return nil
}

// options are the parquet writer's options: rows per row group (0: the
// library's default), compression, the writer and the provenance.
func (w *TreeWriter) options(rows int64) []parquet.WriterOption {
	opts := []parquet.WriterOption{parquet.Compression(&snappy.Codec{}), parquet.CreatedBy("specsim", "data", "schema 2")}
	if rows > 0 {
		opts = append(opts, parquet.MaxRowsPerRowGroup(rows))
	}
	for _, kv := range w.opt.Provenance.pairs() {
		if kv[0] == MetaSchemaVersion {
			kv[1] = fmt.Sprint(TreeSchemaVersion)
		}
		opts = append(opts, parquet.KeyValueMetadata(kv[0], kv[1]))
	}
	return opts
}

// Close finishes the file; a tree log with no rows is still a valid
// parquet file with the schema.
func (w *TreeWriter) Close() error {
	if w.pw == nil {
		w.pw = parquet.NewGenericWriter[TreeLogRow](w.buf, w.options(0)...)
	}
	err := w.pw.Close()
	if ferr := w.buf.Flush(); err == nil {
		err = ferr
	}
	return err
}

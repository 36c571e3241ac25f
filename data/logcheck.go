package data

import (
	"fmt"
	"math"

	"github.com/specsim/specsim/internal/diag"
	"github.com/specsim/specsim/sim"
)

// RowSumTol is the largest |Σ row - 1| accepted for a stored probability
// row: float32 rows of V = 128256 normalised entries sum to 1 within about
// 1e-5 when summed in float64, and a row that was never normalised misses
// by far more.
const RowSumTol = 1e-3

// checkRow validates one decoded row's header, shapes and values (except
// q(x_i) > 0 for logits, which needs the transform: see Reader). row is the
// row's index in the file and v the file's vocabulary size (0 if not yet
// known).
func checkRow(r *LogRow, row int64, v int, budget int64) error {
	bad := func(field, format string, a ...any) error {
		return &StepError{Row: row, RunID: r.RunID, PromptID: r.PromptID, Step: r.Step, Field: field, Msg: fmt.Sprintf(format, a...)}
	}
	if err := checkRowHeader(r, v, budget, bad); err != nil {
		return err
	}
	if err := checkRowTokens(r, bad); err != nil {
		return err
	}
	switch r.Layout {
	case LayoutDense:
		return checkDenseRows(r, bad)
	case LayoutSparse:
		return checkSparseRows(r, bad)
	default:
		return bad("layout", "%q; use %q or %q", r.Layout, LayoutDense, LayoutSparse)
	}
}

// checkRowHeader checks r's schema version, γ, vocabulary (against v,
// the earlier rows', when v > 0, and the memory budget), row kind and
// sampling parameters, reporting through bad.
func checkRowHeader(r *LogRow, v int, budget int64, bad func(string, string, ...any) error) error {
	if r.SchemaVersion != SchemaVersion {
		return bad("schema_version", "version %d is not supported; this reader reads version %d", r.SchemaVersion, SchemaVersion)
	}
	g, vs := int(r.Gamma), int(r.VocabSize)
	if g < 1 || g > sim.MaxGamma {
		return bad("gamma", "γ = %d; need 1 <= γ <= %d", g, sim.MaxGamma)
	}
	if vs < 2 {
		return bad("vocab_size", "V = %d; need at least 2 tokens", vs)
	}
	if vs > MaxVocab {
		return bad("vocab_size", "V = %d is above the largest vocabulary a log may declare, %d (data.MaxVocab)", vs, MaxVocab)
	}
	if err := checkRowMem(g, vs, budget); err != nil {
		return bad("vocab_size", "%v", err)
	}
	if v > 0 && vs != v {
		return bad("vocab_size", "V = %d but earlier rows have V = %d; a log holds one vocabulary", vs, v)
	}
	if r.RowKind != KindProbs && r.RowKind != KindLogits {
		return bad("row_kind", "%q; use %q or %q", r.RowKind, KindProbs, KindLogits)
	}
	s := Sampling{Temperature: r.Temperature, TopK: int(r.TopK), TopP: r.TopP, MinP: r.MinP}
	if err := s.Validate(); err != nil {
		return bad("sampling", "%v", err)
	}
	return nil
}

// checkRowTokens checks r's draft and emitted tokens (r's header is
// checked): γ drafts in the vocabulary, 1..γ+1 emitted tokens whose
// accepted ones are a prefix of the draft.
func checkRowTokens(r *LogRow, bad func(string, string, ...any) error) error {
	g, vs := int(r.Gamma), int(r.VocabSize)
	if len(r.DraftTokens) != g {
		return bad("draft_tokens", "%d tokens for γ = %d", len(r.DraftTokens), g)
	}
	for i, x := range r.DraftTokens {
		if x < 0 || int(x) >= vs {
			return bad("draft_tokens", "token %d at position %d is outside [0, %d)", x, i, vs)
		}
	}
	if len(r.Emitted) == 0 {
		return bad("emitted_tokens", "empty; a step emits at least one token (the accepted drafts, then the correction or bonus token)")
	}
	if len(r.Emitted) > g+1 {
		return bad("emitted_tokens", "%d tokens; a step emits at most γ+1 = %d", len(r.Emitted), g+1)
	}
	for i, x := range r.Emitted {
		if x < 0 || int(x) >= vs {
			return bad("emitted_tokens", "token %d at position %d is outside [0, %d)", x, i, vs)
		}
		if i < len(r.Emitted)-1 && x != r.DraftTokens[i] {
			return bad("emitted_tokens", "token %d at position %d differs from draft token %d; the accepted tokens are a prefix of the draft", x, i, r.DraftTokens[i])
		}
	}
	return nil
}

// checkDenseRows checks the dense q and p rows of r (header and tokens
// checked): their sizes, their values, and that every draft token had
// q > 0.
func checkDenseRows(r *LogRow, bad func(string, string, ...any) error) error {
	g, vs := int(r.Gamma), int(r.VocabSize)
	if len(r.QNNZ)+len(r.QIndex)+len(r.QValue)+len(r.QTail)+len(r.PNNZ)+len(r.PIndex)+len(r.PValue)+len(r.PTail) != 0 {
		return bad("layout", "dense rows with sparse columns set; fill either q/p or the q_*/p_* sparse columns")
	}
	if len(r.Q) != g*vs {
		return bad("q", "%d entries; need γ·V = %d·%d = %d", len(r.Q), g, vs, g*vs)
	}
	if len(r.P) != (g+1)*vs {
		return bad("p", "%d entries; need (γ+1)·V = %d·%d = %d", len(r.P), g+1, vs, (g+1)*vs)
	}
	for i := 0; i < g; i++ {
		if msg := checkValues(r.RowKind, r.Q[i*vs:(i+1)*vs], 0, true); msg != "" {
			return bad("q", "row q_%d: %s", i+1, msg)
		}
	}
	for i := 0; i <= g; i++ {
		if msg := checkValues(r.RowKind, r.P[i*vs:(i+1)*vs], 0, true); msg != "" {
			return bad("p", "row p_%d: %s", i+1, msg)
		}
	}
	if r.RowKind == KindProbs {
		for i, x := range r.DraftTokens {
			if !(r.Q[i*vs+int(x)] > 0) {
				return bad("q", "draft token %d at position %d has q = 0: it cannot have been drawn from q_%d", x, i, i+1)
			}
		}
	}
	return nil
}

// checkSparseRows checks the sparse q and p rows of r (header and tokens
// checked): probabilities only, no dense columns, well-formed sparse
// columns, and q > 0 at every draft token.
func checkSparseRows(r *LogRow, bad func(string, string, ...any) error) error {
	g, vs := int(r.Gamma), int(r.VocabSize)
	if r.RowKind != KindProbs {
		return bad("layout", "sparse rows must hold probabilities, not %s", r.RowKind)
	}
	if len(r.Q)+len(r.P) != 0 {
		return bad("layout", "sparse rows with dense q/p columns set")
	}
	if err := checkSparse("q", r.QNNZ, r.QIndex, r.QValue, r.QTail, g, vs, bad); err != nil {
		return err
	}
	if err := checkSparse("p", r.PNNZ, r.PIndex, r.PValue, r.PTail, g+1, vs, bad); err != nil {
		return err
	}
	off := 0
	for i, x := range r.DraftTokens {
		n := int(r.QNNZ[i])
		if qx := sparseAt(r.QIndex[off:off+n], r.QValue[off:off+n], r.QTail[i], vs, int(x)); !(qx > 0) {
			return bad("q", "draft token %d at position %d has q = 0: it cannot have been drawn from q_%d", x, i, i+1)
		}
		off += n
	}
	return nil
}

// MaxVocab is the largest vocab_size a log may declare: 2^22 = 4,194,304
// tokens, four times the largest vocabulary of any current model and the
// same limit as the synthetic pools. A corrupted or hostile vocab_size
// (2e9 in a 7 KB sparse log) would otherwise have every row expanded to
// gigabytes.
const MaxVocab = 1 << 22

// checkRowMem checks the memory one step of γ = g over V = v tokens takes
// in the reader before it is allocated: the 2γ+1 rows of V float32s,
// expanded from sparse storage, transformed, and once more for a planted
// bug, against budget (0: sim.DefaultMemBudget).
func checkRowMem(g, v int, budget int64) error {
	if err := sim.CheckMem(fmt.Sprintf("a step with γ = %d over V = %d", g, v),
		sim.MulBytes(int64(2*g+1), int64(v), 4*3), budget, "check the log's vocab_size"); err != nil {
		return diag.Usage(err)
	}
	return nil
}

// checkValues checks one row's values: probabilities finite, ≥ 0 and (if
// full) summing to 1 within RowSumTol together with tail; logits not NaN
// or +Inf. It returns "" if the row is fine.
func checkValues(kind string, row []float32, tail float64, full bool) string {
	if kind == KindLogits {
		for x, l := range row {
			if f := float64(l); math.IsNaN(f) || math.IsInf(f, 1) {
				return fmt.Sprintf("logit %d is %v; logits must be finite or -Inf", x, f)
			}
		}
		return ""
	}
	s := tail
	for x, p := range row {
		f := float64(p)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return fmt.Sprintf("entry %d is %v; probabilities must be finite", x, f)
		}
		if f < 0 {
			return fmt.Sprintf("entry %d = %g is a negative probability", x, f)
		}
		s += f
	}
	if full && math.Abs(s-1) > RowSumTol {
		return fmt.Sprintf("sums to %.7g, not 1 (tolerance %g); store normalised probabilities or set row_kind = logits", s, RowSumTol)
	}
	return ""
}

func checkSparse(name string, nnz, idx []int32, val, tail []float32, rows, v int, bad func(string, string, ...any) error) error {
	if len(nnz) != rows || len(tail) != rows {
		return bad(name+"_nnz", "%d counts and %d tails for %d rows", len(nnz), len(tail), rows)
	}
	if len(idx) != len(val) {
		return bad(name+"_index", "%d indices but %d values", len(idx), len(val))
	}
	off := 0
	for i, n := range nnz {
		if n < 1 || int(n) > v || off+int(n) > len(idx) {
			return bad(name+"_nnz", "row %d keeps %d entries (V = %d, %d indices left)", i+1, n, v, len(idx)-off)
		}
		prev := int32(-1)
		for _, x := range idx[off : off+int(n)] {
			if x <= prev || int(x) >= v {
				return bad(name+"_index", "row %d: index %d out of order or outside [0, %d); indices must increase", i+1, x, v)
			}
			prev = x
		}
		t := float64(tail[i])
		if math.IsNaN(t) || t < 0 || t > 1 {
			return bad(name+"_tail", "row %d: tail mass %v outside [0, 1]", i+1, t)
		}
		if int(n) == v && t != 0 {
			return bad(name+"_tail", "row %d keeps every token but has tail mass %g", i+1, t)
		}
		if msg := checkValues(KindProbs, val[off:off+int(n)], t, true); msg != "" {
			return bad(name+"_value", "row %d: %s", i+1, msg)
		}
		off += int(n)
	}
	if off != len(idx) {
		return bad(name+"_nnz", "counts add to %d but %d indices are stored", off, len(idx))
	}
	return nil
}

// sparseAt returns the loaded probability of token x in a sparse row.
func sparseAt(idx []int32, val []float32, tail float32, v, x int) float64 {
	for k, i := range idx {
		if int(i) == x {
			return float64(val[k])
		}
	}
	return float64(tail) / float64(v-len(idx))
}

// expandSparse writes the dense row of a sparse one into dst: the kept
// values, and tail/(V - nnz) on every other token.
func expandSparse(dst []float32, idx []int32, val []float32, tail float32) {
	fill := float32(0)
	if rest := len(dst) - len(idx); rest > 0 {
		fill = float32(float64(tail) / float64(rest))
	}
	for x := range dst {
		dst[x] = fill
	}
	for k, i := range idx {
		dst[i] = val[k]
	}
}

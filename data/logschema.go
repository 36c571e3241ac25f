package data

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/specsim/specsim/internal/diag"
	"github.com/specsim/specsim/internal/gitrev"
)

// SchemaVersion is the version of the log schema this package writes and
// the only one it reads. It is stored in every row (schema_version) and in
// the file's key/value metadata (specsim.schema_version).
const SchemaVersion = 1

// Row kinds: what the stored rows hold.
const (
	// KindProbs: rows are processed probabilities, the laws the run drew
	// from and verified against; they are replayed as they are.
	KindProbs = "probs"
	// KindLogits: rows are raw logits; the reader applies the logged
	// sampling transforms (Sampling) to p and q alike before replay.
	KindLogits = "logits"
)

// Row layouts: how the rows are stored.
const (
	// LayoutDense stores every row in full: q has γ·V entries and p
	// (γ+1)·V, row-major (row i is entries [i·V, (i+1)·V)).
	LayoutDense = "dense"
	// LayoutSparse stores, per row, the nnz largest entries (indices and
	// values) plus the tail mass 1 - Σ values; the loader spreads the tail
	// uniformly over the V - nnz other tokens. Only probabilities can be
	// stored sparse.
	LayoutSparse = "sparse"
)

// LogRow is one speculative step as stored in parquet, one row per step.
// Column names (parquet type):
//
//	schema_version  INT32            SchemaVersion (1)
//	run_id          BYTE_ARRAY UTF8  the logged run (a file may hold several)
//	prompt_id       INT64            the prompt (sequence) within the run
//	step            INT64            step index within the prompt, from 0
//	gamma           INT32            draft length γ ≥ 1
//	vocab_size      INT32            V, the same in every row of a file
//	draft_tokens    LIST<INT32>      x_1..x_γ, x_i drawn from q_i
//	emitted_tokens  LIST<INT32>      what the logged run emitted this step:
//	                                 x_1..x_n then its correction/bonus token
//	target_model    BYTE_ARRAY UTF8  target model name
//	draft_model     BYTE_ARRAY UTF8  draft model name
//	temperature     DOUBLE           sampling temperature (0: greedy)
//	top_k           INT32            top-k filter (0: off)
//	top_p           DOUBLE           nucleus filter in (0, 1] (1: off)
//	min_p           DOUBLE           min-p filter in [0, 1) (0: off)
//	row_kind        BYTE_ARRAY UTF8  "logits" or "probs"
//	layout          BYTE_ARRAY UTF8  "dense" or "sparse"
//	q, p            LIST<FLOAT>      dense rows, row-major: q_1..q_γ (γ·V)
//	                                 and p_1..p_{γ+1} ((γ+1)·V); empty
//	                                 when sparse
//	q_nnz, p_nnz    LIST<INT32>      sparse: entries kept per row (γ, γ+1)
//	q_index, p_index LIST<INT32>     sparse: token ids, rows concatenated
//	q_value, p_value LIST<FLOAT>     sparse: probabilities of those tokens
//	q_tail, p_tail  LIST<FLOAT>      sparse: per-row mass of the other tokens
//
// p_{γ+1} is the bonus row. When row_kind is "probs" the sampling
// parameters are informative (the rows already include them); when it is
// "logits" the reader applies them to every row (Sampling.Apply).
type LogRow struct {
	SchemaVersion int32     `parquet:"schema_version" json:"schema_version"`
	RunID         string    `parquet:"run_id,dict" json:"run_id"`
	PromptID      int64     `parquet:"prompt_id" json:"prompt_id"`
	Step          int64     `parquet:"step" json:"step"`
	Gamma         int32     `parquet:"gamma" json:"gamma"`
	VocabSize     int32     `parquet:"vocab_size" json:"vocab_size"`
	DraftTokens   []int32   `parquet:"draft_tokens,list" json:"draft_tokens"`
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
	QNNZ          []int32   `parquet:"q_nnz,list" json:"q_nnz"`
	QIndex        []int32   `parquet:"q_index,list" json:"q_index"`
	QValue        []float32 `parquet:"q_value,list" json:"q_value"`
	QTail         []float32 `parquet:"q_tail,list" json:"q_tail"`
	PNNZ          []int32   `parquet:"p_nnz,list" json:"p_nnz"`
	PIndex        []int32   `parquet:"p_index,list" json:"p_index"`
	PValue        []float32 `parquet:"p_value,list" json:"p_value"`
	PTail         []float32 `parquet:"p_tail,list" json:"p_tail"`
}

// Columns lists the column names of LogRow in schema order; a file
// missing any of them is not a log of this schema.
var Columns = []string{"schema_version", "run_id", "prompt_id", "step", "gamma", "vocab_size",
	"draft_tokens", "emitted_tokens", "target_model", "draft_model", "temperature", "top_k", "top_p", "min_p",
	"row_kind", "layout", "q", "p", "q_nnz", "q_index", "q_value", "q_tail", "p_nnz", "p_index", "p_value", "p_tail"}

// ErrInvalid is wrapped by every error about a log's content (shapes,
// values, versions); errors that wrap it mean "the file was read but is
// not a valid log", as opposed to I/O or decoding failures. It is a usage
// error (diag.ErrUsage): the input is the user's to fix.
var ErrInvalid = diag.New(diag.ErrUsage, "invalid log")

// ErrCorrupt is wrapped by errors about files that cannot be decoded as
// parquet at all (truncated, corrupt, not parquet). It is an I/O error
// (diag.ErrIO).
var ErrCorrupt = diag.New(diag.ErrIO, "unreadable log")

// StepError locates a problem in one step of a log: the row's position in
// the file, its identifiers and the offending field.
type StepError struct {
	Row      int64 // 0-based row index in the file
	RunID    string
	PromptID int64
	Step     int64
	Field    string
	Msg      string
}

func (e *StepError) Error() string {
	return fmt.Sprintf("row %d (run %q, prompt %d, step %d): %s: %s", e.Row, e.RunID, e.PromptID, e.Step, e.Field, e.Msg)
}

// Unwrap makes every StepError an ErrInvalid.
func (e *StepError) Unwrap() error { return ErrInvalid }

// Metadata keys of the file's key/value metadata.
const (
	MetaSchemaVersion = "specsim.schema_version"
	MetaWriter        = "specsim.writer"
	MetaRevision      = "specsim.vcs_revision"
	MetaGoVersion     = "specsim.go_version"
	MetaSeed          = "specsim.seed"
	MetaSource        = "specsim.source"
	MetaCreated       = "specsim.created"
	// MetaPrefix prefixes every free-form Provenance.Extra key.
	MetaPrefix = "specsim."
)

// Provenance is what a log records about how it was made, stored as the
// file's key/value metadata.
type Provenance struct {
	// Writer names the program that wrote the file ("simulate
	// log-synthetic", "data/logger/logger.py", ...).
	Writer string
	// Revision is the VCS revision of the writer and GoVersion (or the
	// Python and library versions, for the logger) its toolchain.
	Revision, GoVersion string
	// Seed is the master seed of the logged run.
	Seed uint64
	// Source describes the model pair (a spec, or model names).
	Source string
	// Created is an RFC 3339 timestamp (optional).
	Created string
	// Extra holds further key/value pairs (keys without the "specsim."
	// prefix; it is added on write and removed on read).
	Extra map[string]string
}

// BuildProvenance fills Revision and GoVersion from the running binary's
// build information (internal/gitrev: the stamped revision, "+dirty" when
// modified, else the working directory's checkout from git, else
// "unknown").
func BuildProvenance(writer, source string, seed uint64) Provenance {
	return Provenance{Writer: writer, Source: source, Seed: seed, Revision: gitrev.Revision(), GoVersion: gitrev.Current().GoVersion}
}

// pairs renders the provenance as key/value metadata, keys sorted.
// Map flattens the provenance into one map: writer, revision, go_version,
// seed, source and created, then the Extra keys.
func (pv Provenance) Map() map[string]string {
	m := map[string]string{"writer": pv.Writer, "revision": pv.Revision, "go_version": pv.GoVersion,
		"seed": strconv.FormatUint(pv.Seed, 10), "source": pv.Source, "created": pv.Created}
	for k, v := range pv.Extra {
		m[k] = v
	}
	return m
}

func (pv Provenance) pairs() [][2]string {
	kv := [][2]string{
		{MetaSchemaVersion, strconv.Itoa(SchemaVersion)},
		{MetaWriter, pv.Writer},
		{MetaRevision, pv.Revision},
		{MetaGoVersion, pv.GoVersion},
		{MetaSeed, strconv.FormatUint(pv.Seed, 10)},
		{MetaSource, pv.Source},
		{MetaCreated, pv.Created},
	}
	keys := make([]string, 0, len(pv.Extra))
	for k := range pv.Extra {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		kv = append(kv, [2]string{MetaPrefix + k, pv.Extra[k]})
	}
	return kv
}

// provenanceFrom reads the provenance back from a metadata lookup.
func provenanceFrom(lookup func(string) (string, bool), keys []string) Provenance {
	get := func(k string) string { v, _ := lookup(k); return v }
	pv := Provenance{Writer: get(MetaWriter), Revision: get(MetaRevision), GoVersion: get(MetaGoVersion),
		Source: get(MetaSource), Created: get(MetaCreated), Extra: map[string]string{}}
	pv.Seed, _ = strconv.ParseUint(get(MetaSeed), 10, 64)
	known := map[string]bool{MetaSchemaVersion: true, MetaWriter: true, MetaRevision: true, MetaGoVersion: true,
		MetaSeed: true, MetaSource: true, MetaCreated: true}
	for _, k := range keys {
		if strings.HasPrefix(k, MetaPrefix) && !known[k] {
			pv.Extra[strings.TrimPrefix(k, MetaPrefix)] = get(k)
		}
	}
	return pv
}

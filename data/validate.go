package data

import (
	"errors"
	"fmt"
	"time"

	"github.com/specsim/specsim/internal/diag"
	"github.com/specsim/specsim/internal/fsutil"
)

// ValidateReport is the result of Validate (the JSON form of 'simulate
// validate-log'; field names are stable).
type ValidateReport struct {
	File       string            `json:"file"`
	Valid      bool              `json:"valid"`
	Readable   bool              `json:"readable"`
	Rows       int64             `json:"rows"`
	Checked    int64             `json:"checked"`
	RowGroups  int               `json:"row_groups"`
	Provenance map[string]string `json:"provenance"`
	Problems   []string          `json:"problems"`
	Warnings   diag.Warnings     `json:"warnings"`
}

// invalidError is an error about a log's content: it reads as msg and
// matches ErrInvalid.
type invalidError struct{ msg string }

func (e invalidError) Error() string { return e.msg }
func (e invalidError) Unwrap() error { return ErrInvalid }

// Validate reads the whole log at path, checking its schema, shapes,
// values and decoding, and lists up to maxProblems problems. The report
// is complete whatever the error: nil for a valid log, an error matching
// ErrInvalid for invalid content, any other error for an unreadable file.
// Each step's rows are checked against budget bytes (0:
// sim.DefaultMemBudget), as a replay of the log would check them.
func Validate(path string, maxProblems int, budget int64) (*ValidateReport, error) {
	out := &ValidateReport{File: path, Problems: []string{}}
	r, err := openScanner(path, budget)
	if err != nil {
		out.Problems = append(out.Problems, err.Error())
		if errors.Is(err, ErrInvalid) {
			out.Readable = true
			return out, fmt.Errorf("%s is not a valid log: %w", path, err)
		}
		return out, fmt.Errorf("%s is unreadable: %w", path, err)
	}
	defer r.Close()
	out.Readable = true
	m := r.Meta()
	out.Rows, out.RowGroups, out.Provenance = m.Rows, m.RowGroups, m.Provenance.Map()
	invalid, first := 0, ""
	for {
		for r.Next() {
			out.Checked++
		}
		err := r.Err()
		if err == nil {
			break
		}
		if errors.Is(err, ErrInvalid) {
			if invalid++; invalid == 1 {
				first = err.Error()
			}
			if len(out.Problems) < maxProblems {
				out.Problems = append(out.Problems, err.Error())
			}
			if r.Resume() {
				continue
			}
			break
		}
		out.Readable = false
		out.Problems = append(out.Problems, err.Error())
		return out, fmt.Errorf("%s is unreadable after %d rows: %w", path, out.Checked, err)
	}
	if w, ok := r.(interface{ Warnings() diag.Warnings }); ok {
		out.Warnings = append(out.Warnings, w.Warnings()...)
	}
	if invalid > 0 {
		return out, invalidError{fmt.Sprintf("%s is not a valid log: %d invalid rows, first: %s", path, invalid, first)}
	}
	out.Valid = true
	return out, nil
}

// scanner is what Validate needs of a Reader or a TreeReader.
type scanner interface {
	Next() bool
	Err() error
	Resume() bool
	Meta() Meta
	Close() error
}

// openScanner opens the log at path with the reader of its schema
// version (LogVersion): a TreeReader for tree logs, else a Reader.
func openScanner(path string, budget int64) (scanner, error) {
	v, err := LogVersion(path)
	if err != nil {
		return nil, err
	}
	if v == TreeSchemaVersion {
		return OpenTree(path, ReadOptions{MemBudget: budget})
	}
	return Open(path, ReadOptions{MemBudget: budget})
}

// DecodeSummary is the JSON form of 'simulate replay --decode-only'; field
// names are stable.
type DecodeSummary struct {
	Log         string  `json:"log"`
	Steps       int64   `json:"steps"`
	Bytes       int64   `json:"bytes"`
	ElapsedS    float64 `json:"elapsed_s"`
	StepsPerSec float64 `json:"steps_per_s"`
	MBPerSec    float64 `json:"mb_per_s"`
}

// DecodeFile times DecodeOnly on the log at path (the I/O floor of
// replay), under the memory budget (0: sim.DefaultMemBudget), after
// validating it as 'simulate validate-log' does (Validate): a log that
// command calls invalid or unreadable gets its error here, not a
// throughput. Errors opening the file are returned as they are; decoding
// errors match ErrCorrupt, a page or step above the budget
// sim.ErrMemBudget.
func DecodeFile(path string, budget int64) (*DecodeSummary, error) {
	if _, err := Validate(path, 1, budget); err != nil {
		return nil, err
	}
	f, err := fsutil.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	start := time.Now()
	n, err := DecodeOnly(f, st.Size(), budget)
	if err != nil {
		return nil, err
	}
	el := time.Since(start).Seconds()
	return &DecodeSummary{Log: path, Steps: n, Bytes: st.Size(), ElapsedS: el,
		StepsPerSec: float64(n) / el, MBPerSec: float64(st.Size()) / el / 1e6}, nil
}

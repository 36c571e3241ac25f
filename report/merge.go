package report

import (
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/specsim/specsim/internal/diag"
	"github.com/specsim/specsim/internal/fsutil"
	"github.com/specsim/specsim/table"

	"github.com/specsim/specsim/data/results"
	"github.com/specsim/specsim/experiments/sweep"
)

// MergeSummary describes a merged sweep; it is the JSON form of 'report
// merge'. Field names are stable.
type MergeSummary struct {
	Out          string          `json:"out"`
	Experiment   string          `json:"experiment"`
	SpecHash     string          `json:"spec_hash"`
	Seed         string          `json:"seed"`
	Cells        int             `json:"cells"`
	Rows         int             `json:"rows"`
	Files        int             `json:"files"`
	Duplicates   int             `json:"duplicates"`
	GitRevisions string          `json:"git_revisions"`
	GoVersions   string          `json:"go_versions"`
	Columns      []ColumnSummary `json:"columns"`
	Table        []table.Row     `json:"table,omitempty"`
}

// ColumnSummary describes one column: numeric columns get their range and
// mean over the non-null values; others their number of distinct values.
type ColumnSummary struct {
	Name     string   `json:"name"`
	Type     string   `json:"type"`
	NonNull  int      `json:"non_null"`
	Min      *float64 `json:"min,omitempty"`
	Mean     *float64 `json:"mean,omitempty"`
	Max      *float64 `json:"max,omitempty"`
	Distinct int      `json:"distinct,omitempty"`
}

func Summarize(t results.Table) []ColumnSummary {
	var out []ColumnSummary
	for _, col := range t.Columns {
		cs := ColumnSummary{Name: col.Name, Type: col.Type}
		lo, hi, sum := math.Inf(1), math.Inf(-1), 0.0
		distinct := map[string]bool{}
		for _, r := range t.Rows {
			v, ok := r.Get(col.Name)
			if !ok {
				continue
			}
			cs.NonNull++
			switch x := v.(type) {
			case float64:
				lo, hi, sum = math.Min(lo, x), math.Max(hi, x), sum+x
			case int64:
				f := float64(x)
				lo, hi, sum = math.Min(lo, f), math.Max(hi, f), sum+f
			default:
				distinct[fmt.Sprint(x)] = true
			}
		}
		if (col.Type == results.Double || col.Type == results.Int64) && cs.NonNull > 0 {
			mean := sum / float64(cs.NonNull)
			cs.Min, cs.Max, cs.Mean = &lo, &hi, &mean
		} else {
			cs.Distinct = len(distinct)
		}
		out = append(out, cs)
	}
	return out
}

// Merge checks and merges every cell file under dir (sweep.MergeDir),
// writes the merged table to out (default dir/merged.parquet) and returns
// its summary (errors are marked with their kind, internal/diag); withRows also puts the rows in the summary.
func Merge(dir, out string, withRows bool) (MergeSummary, error) {
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return MergeSummary{}, diag.Usage(fmt.Errorf("%s is not a directory; give the directory 'simulate run' wrote into", dir))
	}
	if out == "" {
		out = filepath.Join(dir, "merged.parquet")
	}
	if err := checkMergeOut(dir, out); err != nil {
		return MergeSummary{}, diag.Usage(err)
	}
	t, rep, err := sweep.MergeDir(dir)
	if err != nil {
		return MergeSummary{}, ioErr(err)
	}
	if err := results.WriteFile(out, t.Rows, t.Meta); err != nil {
		return MergeSummary{}, ioErr(err)
	}
	s := MergeSummary{Out: out, Experiment: t.Meta[results.KeyExperiment], SpecHash: t.Meta[results.KeySpecHash],
		Seed: t.Meta[results.KeySeed], Cells: rep.Cells, Rows: len(t.Rows), Files: rep.Files, Duplicates: rep.Duplicates,
		GitRevisions: t.Meta[results.KeyGitRevision], GoVersions: t.Meta[results.KeyGoVersion], Columns: Summarize(t)}
	if withRows {
		s.Table = t.Rows
	}
	return s, nil
}

// checkMergeOut refuses a merge output that is not a regular file or is
// the sweep's bookkeeping (results.CheckOutput), or one of its inputs:
// an existing cell file under dir (compared by file identity), or any file
// in dir's cells directory, where a merged table would be read back as a
// shard's output by the next merge or resume.
func checkMergeOut(dir, out string) error {
	if err := results.CheckOutput(out); err != nil {
		return err
	}
	cells := filepath.Join(dir, results.CellsDir)
	if ci, err := os.Stat(cells); err == nil {
		if oi, err := os.Stat(filepath.Dir(out)); err == nil && os.SameFile(ci, oi) {
			return fmt.Errorf("%w: %w", fsutil.ErrOutputIsInput, diag.Param("out", " %s is inside the sweep's cells directory %s; write the merged table elsewhere (default %s)",
				out, cells, filepath.Join(dir, "merged.parquet")))
		}
	}
	var inputs []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".parquet") {
			inputs = append(inputs, p)
		}
		return nil
	})
	err := fsutil.CheckNotInput(out, inputs...)
	if err != nil {
		if t, rerr := results.ReadFile(out); rerr == nil && t.Meta[results.KeyKind] == "merged" {
			return nil // an earlier merged table, which merge skips: replacing it is fine
		}
	}
	return err
}

// WriteText prints s as 'report merge' does without --json: a header, the
// column summary as an aligned table, and with rows the merged rows.
func (s MergeSummary) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "merged %d cells (%d rows) from %d files into %s\n", s.Cells, s.Rows, s.Files, s.Out)
	fmt.Fprintf(w, "experiment %s, spec %.12s, seed %s, git %s, %s\n", s.Experiment, s.SpecHash, s.Seed, s.GitRevisions, s.GoVersions)
	if s.Duplicates > 0 {
		fmt.Fprintf(w, "%d duplicate cells with identical rows ignored\n", s.Duplicates)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "column\ttype\tnon_null\tmin\tmean\tmax\tdistinct")
	for _, cs := range s.Columns {
		f := func(p *float64) string {
			if p == nil {
				return "-"
			}
			return fmt.Sprintf("%.6g", *p)
		}
		d := "-"
		if cs.Distinct > 0 {
			d = fmt.Sprint(cs.Distinct)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\n", cs.Name, cs.Type, cs.NonNull, f(cs.Min), f(cs.Mean), f(cs.Max), d)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if s.Table != nil {
		fmt.Fprintln(w)
		return table.PrintRows(w, s.Table)
	}
	return nil
}

package report

import (
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"text/tabwriter"

	"github.com/specsim/specsim/internal/cliutil"
	"github.com/specsim/specsim/table"

	"github.com/specsim/specsim/data/results"
	"github.com/specsim/specsim/experiments"
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

// Merge checks and merges every cell file under dir (experiments.MergeDir),
// writes the merged table to out (default dir/merged.parquet) and returns
// its summary (errors carry their exit code, cliutil.CodeOf); withRows also puts the rows in the summary.
func Merge(dir, out string, withRows bool) (MergeSummary, error) {
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return MergeSummary{}, cliutil.Usage(fmt.Errorf("%s is not a directory; give the --out DIR of 'simulate run'", dir))
	}
	t, rep, err := experiments.MergeDir(dir)
	if err != nil {
		return MergeSummary{}, cliutil.IO(err)
	}
	if out == "" {
		out = filepath.Join(dir, "merged.parquet")
	}
	if err := results.WriteFile(out, t.Rows, t.Meta); err != nil {
		return MergeSummary{}, cliutil.IO(err)
	}
	s := MergeSummary{Out: out, Experiment: t.Meta[results.KeyExperiment], SpecHash: t.Meta[results.KeySpecHash],
		Seed: t.Meta[results.KeySeed], Cells: rep.Cells, Rows: len(t.Rows), Files: rep.Files, Duplicates: rep.Duplicates,
		GitRevisions: t.Meta[results.KeyGitRevision], GoVersions: t.Meta[results.KeyGoVersion], Columns: Summarize(t)}
	if withRows {
		s.Table = t.Rows
	}
	return s, nil
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
		return cliutil.PrintRows(w, s.Table)
	}
	return nil
}

package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"text/tabwriter"

	"github.com/specsim/specsim/internal/cliutil"

	"github.com/urfave/cli/v2"

	"github.com/specsim/specsim/data/results"
	"github.com/specsim/specsim/experiments"
)

// mergeJSON is the JSON form of 'report merge'. Field names are stable.
type mergeJSON struct {
	Out          string            `json:"out"`
	Experiment   string            `json:"experiment"`
	SpecHash     string            `json:"spec_hash"`
	Seed         string            `json:"seed"`
	Cells        int               `json:"cells"`
	Rows         int               `json:"rows"`
	Files        int               `json:"files"`
	Duplicates   int               `json:"duplicates"`
	GitRevisions string            `json:"git_revisions"`
	GoVersions   string            `json:"go_versions"`
	Columns      []columnSummary   `json:"columns"`
	Table        []experiments.Row `json:"table,omitempty"`
}

// columnSummary describes one column: numeric columns get their range and
// mean over the non-null values; others their number of distinct values.
type columnSummary struct {
	Name     string   `json:"name"`
	Type     string   `json:"type"`
	NonNull  int      `json:"non_null"`
	Min      *float64 `json:"min,omitempty"`
	Mean     *float64 `json:"mean,omitempty"`
	Max      *float64 `json:"max,omitempty"`
	Distinct int      `json:"distinct,omitempty"`
}

func mergeCommand() *cli.Command {
	return &cli.Command{
		Name:      "merge",
		Usage:     "check and merge every cell file under DIR into one parquet table",
		ArgsUsage: "DIR",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "out", Usage: "merged table `FILE` (default DIR/merged.parquet)"},
			&cli.BoolFlag{Name: "json", Usage: "print the summary as JSON with stable field names"},
			&cli.BoolFlag{Name: "rows", Usage: "also print the merged rows (JSON: field table)"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return cliutil.Usage(fmt.Errorf("merge needs one directory (the --out DIR of 'simulate run')"))
			}
			dir := c.Args().First()
			if st, err := os.Stat(dir); err != nil || !st.IsDir() {
				return cliutil.Usage(fmt.Errorf("%s is not a directory; give the --out DIR of 'simulate run'", dir))
			}
			t, rep, err := results.Merge(dir)
			if err != nil {
				return cliutil.IO(err)
			}
			out := c.String("out")
			if out == "" {
				out = filepath.Join(dir, "merged.parquet")
			}
			if err := results.WriteFile(out, t.Rows, t.Meta); err != nil {
				return cliutil.IO(err)
			}
			s := mergeJSON{Out: out, Experiment: t.Meta[results.KeyExperiment], SpecHash: t.Meta[results.KeySpecHash],
				Seed: t.Meta[results.KeySeed], Cells: rep.Cells, Rows: len(t.Rows), Files: rep.Files, Duplicates: rep.Duplicates,
				GitRevisions: t.Meta[results.KeyGitRevision], GoVersions: t.Meta[results.KeyGoVersion], Columns: summarize(t)}
			if c.Bool("rows") {
				s.Table = t.Rows
			}
			w := c.App.Writer
			if c.Bool("json") {
				enc := json.NewEncoder(w)
				enc.SetIndent("", "  ")
				return enc.Encode(s)
			}
			fmt.Fprintf(w, "merged %d cells (%d rows) from %d files into %s\n", s.Cells, s.Rows, s.Files, out)
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
			if c.Bool("rows") {
				fmt.Fprintln(w)
				return cliutil.PrintRows(w, t.Rows)
			}
			return nil
		},
	}
}

func summarize(t results.Table) []columnSummary {
	var out []columnSummary
	for _, col := range t.Columns {
		cs := columnSummary{Name: col.Name, Type: col.Type}
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

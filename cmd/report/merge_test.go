package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/specsim/specsim/internal/diag"
	"github.com/specsim/specsim/report"

	"github.com/specsim/specsim/data/results"
	"github.com/specsim/specsim/experiments/sweep"
)

func sweepDir(t *testing.T, shard sweep.Shard) string {
	t.Helper()
	s, err := sweep.LoadSpec("../../experiments/specs/small.toml")
	if err != nil {
		t.Fatal(err)
	}
	p, err := sweep.NewPlan(s, s.Seed)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	d, err := sweep.OpenStore(dir, p, shard)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Run(context.Background(), sweep.Options{Shard: shard, Store: d, Workers: 2}); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestMergeCommand(t *testing.T) {
	dir := sweepDir(t, sweep.All)
	var so, se bytes.Buffer
	out := filepath.Join(t.TempDir(), "m.parquet")
	if code := run(&so, &se, []string{"report", "merge", dir, "--out", out, "--json"}); code != 0 {
		t.Fatalf("exit %d: %s", code, se.String())
	}
	var s report.MergeSummary
	if err := json.Unmarshal(so.Bytes(), &s); err != nil {
		t.Fatal(err)
	}
	if s.Cells != 18 || s.Rows != 18 || s.Files != 18 || s.Seed != "20240601" || s.Experiment != "verify" || s.Out != out {
		t.Fatalf("summary %+v", s)
	}
	var gamma *report.ColumnSummary
	for i := range s.Columns {
		if s.Columns[i].Name == "gamma" {
			gamma = &s.Columns[i]
		}
	}
	if gamma == nil || *gamma.Min != 1 || *gamma.Max != 3 || *gamma.Mean != 2 || gamma.NonNull != 18 {
		t.Fatalf("gamma column %+v", gamma)
	}
	tab, err := results.ReadFile(out)
	if err != nil || tab.Meta[results.KeyKind] != "merged" || len(tab.Rows) != 18 {
		t.Fatalf("merged file: %v %v", err, tab.Meta)
	}
	// Text form, then missing cells (exit 5 naming the cells).
	so.Reset()
	if code := run(&so, &se, []string{"report", "merge", dir}); code != 0 || !strings.Contains(so.String(), "merged 18 cells (18 rows) from 18 files") {
		t.Fatalf("text: %d %s", code, so.String())
	}
	part := sweepDir(t, sweep.Shard{I: 0, N: 2})
	se.Reset()
	if code := run(&so, &se, []string{"report", "merge", part}); code != diag.ExitIO || !strings.Contains(se.String(), "9 of 18 cells are missing: 1 (source=") {
		t.Fatalf("missing cells: exit %d %s", code, se.String())
	}
	os.WriteFile(filepath.Join(part, "cells", "cell-000001.parquet"), []byte("x"), 0o644)
	se.Reset()
	if code := run(&so, &se, []string{"report", "merge", part}); code != diag.ExitIO || !strings.Contains(se.String(), "unreadable shard file") || !strings.Contains(se.String(), "cell-000001.parquet") {
		t.Fatalf("unreadable: exit %d %s", code, se.String())
	}
	se.Reset()
	if code := run(&so, &se, []string{"report", "merge"}); code != diag.ExitUsage {
		t.Fatalf("no dir: exit %d %s", code, se.String())
	}
}

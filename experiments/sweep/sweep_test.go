package sweep_test

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/specsim/specsim/data/results"
	"github.com/specsim/specsim/experiments"
	"github.com/specsim/specsim/experiments/sweep"
)

func loadSmall(t *testing.T) *sweep.Plan {
	t.Helper()
	s, err := sweep.LoadSpec("../specs/small.toml")
	if err != nil {
		t.Fatal(err)
	}
	p, err := sweep.NewPlan(s, s.Seed)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// runInto runs shard sh of p into dir with w workers.
func runInto(t *testing.T, p *sweep.Plan, dir string, sh sweep.Shard, w int) sweep.Result {
	t.Helper()
	d, err := sweep.OpenStore(dir, p, sh)
	if err != nil {
		t.Fatal(err)
	}
	res, err := p.Run(context.Background(), sweep.Options{Shard: sh, Workers: w, Store: d})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func mergeBytes(t *testing.T, dir string) (results.Table, []byte) {
	t.Helper()
	tab, _, err := sweep.MergeDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := results.Write(&b, tab.Rows, tab.Meta); err != nil {
		t.Fatal(err)
	}
	return tab, b.Bytes()
}

// The same spec run as 1 shard, as 3 shards, with 2 workers, and killed
// after some cells then resumed merges to identical tables (the merged
// parquet files are byte for byte equal), equal to the in-memory run.
func TestSweepDeterministicAcrossShardsWorkersResume(t *testing.T) {
	p := loadSmall(t)
	n := len(p.Cells)
	if n != 18 {
		t.Fatalf("small.toml has %d cells, want 3 algos × 3 γ × 2 replicates = 18", n)
	}
	root := t.TempDir()
	one := filepath.Join(root, "one")
	if res := runInto(t, p, one, sweep.All, 1); res.Computed != n || res.Skipped != 0 {
		t.Fatalf("one shard: computed %d skipped %d", res.Computed, res.Skipped)
	}
	three := filepath.Join(root, "three")
	for i := 2; i >= 0; i-- { // any order
		if res := runInto(t, p, three, sweep.Shard{I: i, N: 3}, 1); res.Computed != n/3 {
			t.Fatalf("shard %d/3 computed %d cells, want %d", i, res.Computed, n/3)
		}
	}
	two := filepath.Join(root, "workers")
	runInto(t, p, two, sweep.All, 2)

	// Kill after 5 finished cells: cancel from the progress callback.
	killed := filepath.Join(root, "killed")
	d, err := sweep.OpenStore(killed, p, sweep.All)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var seen atomic.Int64
	res, err := p.Run(ctx, sweep.Options{Workers: 2, Store: d, Progress: func(sweep.Progress) {
		if seen.Add(1) == 5 {
			cancel()
		}
	}})
	if err != context.Canceled {
		t.Fatalf("killed run returned %v, want context.Canceled", err)
	}
	files, _ := filepath.Glob(filepath.Join(killed, "cells", "*.parquet"))
	if len(files) != res.Computed || res.Computed < 5 || res.Computed >= n {
		t.Fatalf("killed run: %d files, %d computed; want the 5+ finished cells only", len(files), res.Computed)
	}
	if _, _, err := sweep.MergeDir(killed); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Fatalf("merge of a killed run: %v, want missing cells", err)
	}
	res2 := runInto(t, p, killed, sweep.All, 1)
	if res2.Skipped != res.Computed || res2.Computed != n-res.Computed {
		t.Fatalf("resume skipped %d computed %d; want %d and %d", res2.Skipped, res2.Computed, res.Computed, n-res.Computed)
	}

	ref, refBytes := mergeBytes(t, one)
	mem, err := p.Run(context.Background(), sweep.Options{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	if err := results.SameRows(ref.Rows, mem.Rows); err != nil {
		t.Fatalf("stored rows differ from the in-memory run: %v", err)
	}
	for _, dir := range []string{three, two, killed} {
		tab, b := mergeBytes(t, dir)
		if err := results.SameRows(ref.Rows, tab.Rows); err != nil {
			t.Errorf("%s: %v", filepath.Base(dir), err)
		}
		if !bytes.Equal(b, refBytes) {
			t.Errorf("%s: merged parquet differs from the one-shard run's", filepath.Base(dir))
		}
	}
}

// The Monte Carlo means of verify agree with the exact engine: |mean −
// exact| ≤ 5 standard errors (CI half-width / 1.96 × 5) in every cell; a
// false failure has probability < 1e-6 per cell, and the seed is fixed.
func TestVerifyMatchesExact(t *testing.T) {
	p := loadSmall(t)
	res, err := p.Run(context.Background(), sweep.Options{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res.Rows {
		for _, m := range []string{"accepted", "emitted"} {
			mean, _ := r.Float("mean_" + m)
			lo, _ := r.Float("mean_" + m + "_lo")
			hi, _ := r.Float("mean_" + m + "_hi")
			ex, ok := r.Float("exact_" + m)
			if !ok {
				t.Fatalf("row %v lacks exact_%s", r, m)
			}
			se := (hi - lo) / 2 / 1.959963984540054
			if math.Abs(mean-ex) > 5*se+1e-12 {
				t.Errorf("%s γ=%s: mean_%s %.5f vs exact %.5f (se %.5f)", r.String("algo"), r.String("gamma"), m, mean, ex, se)
			}
		}
		// token always emits a correction or bonus token after the
		// accepted ones: emitted = accepted + 1 in every step.
		if r.String("algo") == "token" {
			a, _ := r.Float("mean_accepted")
			e, _ := r.Float("mean_emitted")
			if math.Abs(e-a-1) > 1e-12 {
				t.Errorf("token: mean_emitted %g != mean_accepted %g + 1", e, a)
			}
		}
	}
}

func TestSpecErrors(t *testing.T) {
	base := "experiment = \"verify\"\n"
	cases := []struct{ name, text, want string }{
		{"unknown algorithm", base + "[axes]\nsource = \"markov:V=4\"\nalgo = [\"token\", \"nosuch\"]\n", `axis algo: unknown algorithm "nosuch"`},
		{"unknown parameter", base + "[axes]\nsource = \"markov:V=4\"\nalgo = \"token\"\nparam.D = [0.1]\n", "axis algo/param: algorithm token takes no parameters, got D"},
		{"unknown parameter of a rule with parameters", base + "[axes]\nsource = \"markov:V=4\"\nalgo = \"mutant-q-mismatch\"\nparam.D = [0.1]\n", `algorithm mutant-q-mismatch has no parameter "D"; it takes T`},
		{"parameter out of range", base + "[axes]\nsource = \"markov:V=4\"\nalgo = \"mutant-q-mismatch\"\nparam.T = [1, -1]\n", "param T = -1 is outside (0, +Inf)"},
		{"unknown algo parameter", base + "[axes]\nsource = \"markov:V=4\"\nalgo = \"greedy:T=2\"\n", `algorithm greedy takes no parameters, got T`},
		{"unknown axis", base + "[axes]\nsource = \"markov:V=4\"\nalgo = \"token\"\ntemperature = [1]\n", `unknown axis "temperature"`},
		{"axis k", base + "[axes]\nsource = \"markov:V=4\"\nalgo = \"token\"\nk = [2]\n", `unknown axis "k"`},
		{"empty axis", base + "[axes]\nsource = \"markov:V=4\"\nalgo = []\n", "axis algo is empty"},
		{"no axes", base, "[axes] is empty"},
		{"bad gamma", base + "[axes]\nsource = \"markov:V=4\"\nalgo = \"token\"\ngamma = [0]\n", "axis gamma: 0"},
		{"bad source", base + "[axes]\nsource = \"gauss:V=4\"\nalgo = \"token\"\n", `axis source: unknown kind "gauss"`},
		{"unknown metric", base + "metrics = [\"speedup\"]\n[axes]\nsource = \"markov:V=4\"\nalgo = \"token\"\n", `field metrics: unknown metric "speedup"`},
		{"unknown key", base + "seeds = 3\n[axes]\nsource = \"markov:V=4\"\nalgo = \"token\"\n", "unknown key seeds"},
		{"no experiment", "[axes]\nalgo = \"token\"\n", "field experiment is missing"},
		{"unknown experiment", "experiment = \"nope\"\n[axes]\nalgo = \"token\"\n", `field experiment: unknown experiment "nope"`},
		{"zip lengths", base + "zip = [[\"algo\", \"gamma\"]]\n[axes]\nsource = \"markov:V=4\"\nalgo = [\"token\"]\ngamma = [1, 2]\n", "zip group 0: axis gamma has 2 values"},
		{"zip unknown", base + "zip = [[\"algo\", \"beta\"]]\n[axes]\nsource = \"markov:V=4\"\nalgo = [\"token\"]\n", `zip group 0 names axis "beta"`},
		{"bad mode", base + "mode = \"cross\"\n[axes]\nsource = \"markov:V=4\"\nalgo = \"token\"\n", `field mode = "cross"`},
		{"duplicate value", base + "[axes]\nsource = \"markov:V=4\"\nalgo = [\"token\", \"token\"]\n", "axis algo lists token twice"},
		{"an algo parameter twice", base + "[axes]\nsource = \"markov:V=4\"\nalgo = \"lenience:l=0.5,l=0.3\"\n", "axis algo: l given twice"},
		{"an algo parameter that is not a number", base + "[axes]\nsource = \"markov:V=4\"\nalgo = \"lenience:l=Inf\"\n", `axis algo: l="Inf" is not a finite number`},
		{"quality on zipf", base + "[axes]\nsource = \"zipf:V=100\"\nalgo = \"token\"\nquality = 0.5\n", "axis quality: source kind zipf"},
	}
	for _, c := range cases {
		_, err := sweep.ParseSpec(c.text)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v; want it to contain %q", c.name, err, c.want)
		}
	}
}

// Grid order: file order, last axis fastest; a zip group varies together
// at the position of its first axis.
func TestSpecCells(t *testing.T) {
	s, err := sweep.ParseSpec(`experiment = "verify"
zip = [["vocab", "quality"]]
[axes]
source = "markov:order=1"
vocab = [2, 4]
algo = ["token", "greedy"]
quality = [0.25, 0.5]
`)
	if err != nil {
		t.Fatal(err)
	}
	cells, err := s.Cells(experiments.Config{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range cells {
		got = append(got, c.ID())
	}
	want := []string{
		"source=markov:order=1,vocab=2,algo=token,quality=0.25",
		"source=markov:order=1,vocab=2,algo=greedy,quality=0.25",
		"source=markov:order=1,vocab=4,algo=token,quality=0.5",
		"source=markov:order=1,vocab=4,algo=greedy,quality=0.5",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("cells\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	z, err := sweep.ParseSpec("experiment = \"verify\"\nmode = \"zip\"\n[axes]\nsource = [\"markov:V=2\", \"markov:V=3\"]\nalgo = [\"token\", \"greedy\"]\n")
	if err != nil {
		t.Fatal(err)
	}
	if zc, _ := z.Cells(experiments.Config{}); len(zc) != 2 || zc[1].ID() != "source=markov:V=3,algo=greedy" {
		t.Fatalf("zip mode cells %v", zc)
	}
	// The canonical form survives the trip through a results file.
	back, err := sweep.SpecFromCanonical(s.Canonical())
	if err != nil || back.Hash() != s.Hash() {
		t.Fatalf("SpecFromCanonical: %v, hash %s vs %s", err, back.Hash(), s.Hash())
	}
}

func TestShards(t *testing.T) {
	if _, err := sweep.ParseShard("3/3"); err == nil {
		t.Error("3/3 accepted")
	}
	if s, err := sweep.ParseShard("2/5"); err != nil || s != (sweep.Shard{I: 2, N: 5}) {
		t.Errorf("2/5: %v %v", s, err)
	}
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	s, ok, err := sweep.ShardFromEnv(env(map[string]string{"SLURM_ARRAY_TASK_ID": "5", "SLURM_ARRAY_TASK_MIN": "4", "SLURM_ARRAY_TASK_COUNT": "3"}))
	if !ok || err != nil || s != (sweep.Shard{I: 1, N: 3}) {
		t.Errorf("slurm env: %v %v %v", s, ok, err)
	}
	s, ok, err = sweep.ShardFromEnv(env(map[string]string{"JOB_COMPLETION_INDEX": "2", sweep.EnvShardCount: "4"}))
	if !ok || err != nil || s != (sweep.Shard{I: 2, N: 4}) {
		t.Errorf("k8s env: %v %v %v", s, ok, err)
	}
	if _, _, err := sweep.ShardFromEnv(env(map[string]string{"JOB_COMPLETION_INDEX": "2"})); err == nil || !strings.Contains(err.Error(), sweep.EnvShardCount) {
		t.Errorf("k8s env without a count: %v", err)
	}
	if s, ok, err := sweep.ShardFromEnv(env(nil)); ok || err != nil || s != sweep.All {
		t.Errorf("empty env: %v %v %v", s, ok, err)
	}
}

func TestMergeErrors(t *testing.T) {
	p := loadSmall(t)
	root := t.TempDir()
	a := filepath.Join(root, "a")
	runInto(t, p, a, sweep.All, 2)

	// An unreadable shard file: named in the error.
	bad := filepath.Join(a, "cells", "cell-000003.parquet")
	if err := os.WriteFile(bad, []byte("not parquet"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := sweep.MergeDir(a); err == nil || !strings.Contains(err.Error(), "unreadable") || !strings.Contains(err.Error(), "cell-000003.parquet") {
		t.Errorf("unreadable file: %v", err)
	}
	d, _ := sweep.OpenStore(a, p, sweep.All)
	if _, err := p.Run(context.Background(), sweep.Options{Store: d}); err == nil || !strings.Contains(err.Error(), "cell-000003.parquet") {
		t.Errorf("resume over an unreadable file: %v", err)
	}
	os.Remove(bad)
	runInto(t, p, a, sweep.All, 1)

	// A duplicate that disagrees.
	tab, err := results.ReadFile(filepath.Join(a, "cells", "cell-000004.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(a, "copy"), 0o755)
	tab.Rows[0][len(tab.Rows[0])-1].V = 123.0
	if err := results.WriteFile(filepath.Join(a, "copy", "x.parquet"), tab.Rows, tab.Meta); err != nil {
		t.Fatal(err)
	}
	if _, _, err := sweep.MergeDir(a); err == nil || !strings.Contains(err.Error(), "cell 4") || !strings.Contains(err.Error(), "different results") {
		t.Errorf("disagreeing duplicate: %v", err)
	}
	// An identical duplicate is fine.
	tab, _ = results.ReadFile(filepath.Join(a, "cells", "cell-000004.parquet"))
	results.WriteFile(filepath.Join(a, "copy", "x.parquet"), tab.Rows, tab.Meta)
	if _, rep, err := sweep.MergeDir(a); err != nil || rep.Duplicates != 1 {
		t.Errorf("identical duplicate: %v, %d duplicates", err, rep.Duplicates)
	}

	// A shard of another seed.
	p2, _ := sweep.NewPlan(p.Spec, p.Seed+1)
	b := filepath.Join(root, "b")
	runInto(t, p2, b, sweep.Shard{I: 0, N: 3}, 1)
	os.Rename(filepath.Join(b, "cells", "cell-000000.parquet"), filepath.Join(a, "copy", "other-seed.parquet"))
	if _, _, err := sweep.MergeDir(a); err == nil || !strings.Contains(err.Error(), "master seed") {
		t.Errorf("other seed: %v", err)
	}
	// Resuming a directory with another seed is refused.
	if _, err := sweep.OpenStore(a, p2, sweep.All); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("resume with seed %d", p.Seed)) {
		t.Errorf("OpenDir with another seed: %v", err)
	}
}

package experiments

import (
	"context"
	"testing"

	"github.com/specsim/specsim/algos"
	"github.com/specsim/specsim/internal/longtest"
	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/sim/source"
	"github.com/specsim/specsim/table"
)

// TestAudit runs the audit (fixed seed) and checks every verdict is the
// expected one: lossless rules and strict points preserved, mutants
// violated, lossy rules lossy. The long suite (SPECSIM_LONG=1) runs it at
// its default size; the default suite at 5% of the trials. The check holds
// at any size: the exact and edge verdicts do not depend on the trials
// (they flag every mutant and lossy rule), and the statistical checks keep
// the family-wise false-alarm level of check.DefaultLevel at any trial
// count, so a lossless rule is flagged with probability at most 0.01 (here,
// with the fixed seed, never).
func TestAudit(t *testing.T) {
	if testing.Short() {
		t.Skip("the audit takes about a minute; skipped with -short")
	}
	e, err := Lookup("audit")
	if err != nil {
		t.Fatal(err)
	}
	rows, err := RunAll(context.Background(), e, Config{Seed: 1, Scale: longtest.Pick(0.05, 1)})
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, r := range rows {
		kinds[r.String("kind")]++
		if ok, _ := r.Get("ok"); ok != true {
			t.Errorf("%s %s (%s): verdict %s (exact %s, statistical %s, edge %s), expected %s", r.String("algorithm"), r.String("params"),
				r.String("kind"), r.String("verdict"), r.String("exact_verdict"), r.String("statistical_verdict"), r.String("edge_verdict"), r.String("expected"))
		}
	}
	for _, k := range []string{"rule", "mutant", "plant", "lossy", "strict", "tree-rule", "tree-mutant"} {
		if kinds[k] == 0 {
			t.Errorf("the audit has no %s rows", k)
		}
	}
	// every row names the source and γ of its exact and statistical
	// columns, and token's exact E[emitted] is the exact engine's on that
	// source at that γ, bit for bit
	src, err := source.New(AuditEmittedSource, AuditEmittedGamma, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	pair, _ := sim.PairOf(src)
	want, err := sim.Exact(pair, algos.Token{}, sim.ExactConfig{Gamma: AuditEmittedGamma})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if r.String("exact_source") != AuditEmittedSource {
			t.Errorf("%s: exact_source %q", r.String("algorithm"), r.String("exact_source"))
		}
		if r.String("algorithm") == "token" && r.String("kind") == "rule" {
			if g, _ := r.Float("exact_gamma"); int(g) != AuditEmittedGamma {
				t.Errorf("token: exact_gamma %g, want %d", g, AuditEmittedGamma)
			}
			if e, _ := r.Float("expected_emitted"); e != want.ExpectedEmitted {
				t.Errorf("token: expected_emitted %v, exact engine on %s at γ = %d: %v", e, AuditEmittedSource, AuditEmittedGamma, want.ExpectedEmitted)
			}
			if r.String("stat_source") != AuditSource {
				t.Errorf("token: stat_source %q, want %s", r.String("stat_source"), AuditSource)
			}
		}
	}
}

// The audit's own parameter settings are a lossy rule's valid parameters
// and reach the cells: cascade-chow's lossy row runs at α = 0.5, every
// other lossy rule at its defaults (an empty params key).
func TestAuditParams(t *testing.T) {
	if err := checkAuditParams(auditParams); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []map[string]algos.Params{{"nosuch": nil}, {"token": nil}, {"cascade-chow": {"alpha": 2}}, {"cascade-chow": {"beta": 1}}} {
		if err := checkAuditParams(bad); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
	cells, err := auditCells(Config{})
	if err != nil {
		t.Fatal(err)
	}
	lossy := 0
	for _, c := range cells {
		r := Row(c.Key)
		if r.String("kind") != "lossy" {
			continue
		}
		lossy++
		want := ""
		if r.String("algorithm") == "cascade-chow" {
			want = "alpha=0.5"
		}
		if got := r.String("params"); got != want {
			t.Errorf("%s: lossy row at %q, want %q", r.String("algorithm"), got, want)
		}
	}
	if lossy == 0 {
		t.Error("no lossy rows")
	}
}

// TestAuditSizes: a row's statistical check is sized by the TV it must
// detect in its PIT tests (sized_tv; the finest of all its tests is at
// most that). At scale 1, token verification's row (a lossless rule) states a
// minimum detectable TV of at most AuditTV on the pool, and lenience's
// lossy row at most AuditLossyTV on auditLossyTrials; neither is more
// than 20% below its target (the count is not oversized), and each pair
// check runs its own count.
func TestAuditSizes(t *testing.T) {
	if testing.Short() {
		t.Skip("two audit rows at full size; skipped with -short")
	}
	t.Parallel()
	for _, c := range []struct {
		name, kind string
		tv         float64
		pool, pair int64
	}{{"token", "rule", AuditTV, auditTrials, auditPairTrials}, {"lenience", "lossy", AuditLossyTV, auditLossyTrials, auditLossyPairTrials}} {
		rows := auditRows(t, func(r Row) bool { return r.String("algorithm") == c.name && r.String("kind") == c.kind })
		if len(rows) != 1 {
			t.Fatalf("%d audit cells %s (%s), want 1", len(rows), c.name, c.kind)
		}
		r := rows[0]
		tv := table.Num(r, "sized_tv")
		if finest := table.Num(r, "min_detectable_tv"); !(finest <= tv) {
			t.Errorf("%s (%s): the finest test's TV %.4g above the sized TV %.4g", c.name, c.kind, finest, tv)
		}
		if !(tv <= c.tv && tv > 0.8*c.tv) || table.Num(r, "trials") != float64(c.pool) || table.Num(r, "pair_trials") != float64(c.pair) {
			t.Errorf("%s (%s): min detectable TV %.4g over %g pool and %g pair trials; want within (%.3g, %.3g] over %d and %d",
				c.name, c.kind, tv, table.Num(r, "trials"), table.Num(r, "pair_trials"), 0.8*c.tv, c.tv, c.pool, c.pair)
		}
	}
}

// auditRows runs, at scale 1, every audit cell whose key keep accepts,
// and returns each cell's row.
func auditRows(t *testing.T, keep func(Row) bool) []Row {
	t.Helper()
	e, err := Lookup("audit")
	if err != nil {
		t.Fatal(err)
	}
	cells, err := e.Cells(Config{})
	if err != nil {
		t.Fatal(err)
	}
	var rows []Row
	for _, c := range cells {
		if !keep(Row(c.Key)) {
			continue
		}
		out, err := e.Run(context.Background(), Config{Seed: 1, Scale: 1, Workers: 2}, c, CellSeed(1, e.Name, c))
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, out[0])
	}
	return rows
}

// TestAuditPlant: each row planted near the threshold (auditPlants), run
// at scale 1, deviates by an exact TV between one and two times the
// minimum detectable TV its row's PIT tests state (sized_tv), and is
// called violated.
func TestAuditPlant(t *testing.T) {
	if testing.Short() {
		t.Skip("the planted rows at full size; skipped with -short")
	}
	t.Parallel()
	rows := auditRows(t, func(r Row) bool { return r.String("kind") == "plant" })
	for _, r := range rows {
		tv, minTV := table.Num(r, "exact_tv"), table.Num(r, "sized_tv")
		if !(tv >= minTV && tv <= 2*minTV) || r.String("verdict") != "violated" {
			t.Errorf("%s (%s): exact TV %.4g, stated minimum detectable TV %.4g (ratio %.3g, want 1 to 2), verdict %s",
				r.String("algorithm"), r.String("params"), tv, minTV, tv/minTV, r.String("verdict"))
		}
	}
	if len(rows) != len(auditPlants) {
		t.Errorf("%d plant cells, want %d", len(rows), len(auditPlants))
	}
}

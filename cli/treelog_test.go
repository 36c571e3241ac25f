package cli

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/specsim/specsim/algos"
	"github.com/specsim/specsim/data"
	"github.com/specsim/specsim/external"
	"github.com/specsim/specsim/internal/diag"
	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/sim/draft"
	simrun "github.com/specsim/specsim/sim/run"
	"github.com/specsim/specsim/sim/source"
)

// recordTrees logs 3,000 trees (depth 3, 2 draws per node, from the draft
// kind of tree rule name over a Markov pair) verified by that rule, with
// external.RecordTrees.
func recordTrees(t *testing.T, dir, name string) string {
	t.Helper()
	e, err := algos.LookupTree(name)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := e.Build(nil)
	src, err := source.New("markov:V=12,order=2,seed=4", 3, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	pair, _ := sim.PairOf(src)
	d, err := draft.NewTree(e.Draft, draft.Config{Q: pair.Q, K: 2, Depth: 3})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name+".parquet")
	err = data.WriteTreeLog(path, data.WriterOptions{Provenance: data.BuildProvenance("cli test", "markov:V=12,order=2,seed=4", 9)}, func(w *data.TreeWriter) error {
		return external.RecordTrees(context.Background(), draft.TreeRounds(d, pair.P, nil), simrun.Tree(a), w, 3000, 100, 9, name)
	})
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// TestTreeLogCommands: validate-log accepts a logged SpecInfer tree run
// and replay judges its logged run not_detected (exit 0, shape "tree");
// the mutant topk-ratio's log is violated (exit 3 with
// --fail-on-violation); a log whose path leaves its tree is refused by
// both commands (exit 2) naming the row, step and node; options that
// replay rules or plant chain bugs are usage errors on a tree log, and
// --no-divergences says that TV and KL were not computed.
func TestTreeLogCommands(t *testing.T) {
	dir := t.TempDir()
	good := recordTrees(t, dir, "specinfer")
	if code, out, errs := runCLI("validate-log", good); code != 0 || !strings.Contains(out, "valid, 3000 rows") {
		t.Fatalf("validate-log: %d %s %s", code, out, errs)
	}
	code, out, errs := runCLI("replay", good, "--seed", "1", "--json", "--fail-on-violation")
	if code != 0 {
		t.Fatalf("replay: %d %s %s", code, out, errs)
	}
	m := decodeJSON(t, "replay", out, "shape", "logged", "positions", "max_gamma")
	lg := m["logged"].(map[string]any)
	if m["shape"] != "tree" || m["max_gamma"].(float64) != 3 || lg["pit"].(map[string]any)["verdict"] != "not_detected" ||
		lg["lossless"].(map[string]any)["verdict"] != "not_detected" || lg["steps"].(float64) != 3000 {
		t.Errorf("replay of specinfer: %s", out)
	}
	if code, out, _ := runCLI("replay", good, "--no-divergences"); code != 0 || !strings.Contains(out, "position 2: alpha 0.7006  (TV and KL not computed; 5578 nodes)") {
		t.Errorf("replay --no-divergences: exit %d\n%s", code, out)
	}
	bad := recordTrees(t, dir, "topk-ratio")
	if code, out, errs := runCLI("replay", bad, "--seed", "1", "--fail-on-violation"); code != diag.ExitViolated ||
		!strings.Contains(out, "every emitted token: violated") {
		t.Errorf("replay of topk-ratio: exit %d\n%s\n%s", code, out, errs)
	}
	for _, args := range [][]string{{"--algo", "token"}, {"--bug", "q-raw"}, {"--reps", "3"}, {"--steps-out", filepath.Join(dir, "s.csv")}} {
		code, _, errs := runCLI(append([]string{"replay", good}, args...)...)
		if code != diag.ExitUsage || !strings.Contains(errs, args[0]) || !strings.Contains(errs, "tree log") {
			t.Errorf("replay %v on a tree log: exit %d, %s", args, code, errs)
		}
	}
	leaves := leaveTree(t, good, filepath.Join(dir, "leaves.parquet"))
	if d := os.Getenv("SPECSIM_TREELOG_KEEP"); d != "" {
		for _, p := range []string{good, bad, leaves} {
			b, _ := os.ReadFile(p)
			os.WriteFile(filepath.Join(d, filepath.Base(p)), b, 0o644)
		}
	}
	want := "step 0): path: position 1: node "
	if code, out, errs := runCLI("validate-log", leaves); code != diag.ExitUsage || !strings.Contains(out, want) || !strings.Contains(out, "the path leaves the tree") {
		t.Errorf("validate-log of a path off the tree: exit %d\n%s\n%s", code, out, errs)
	}
	if code, _, errs := runCLI("replay", leaves); code != diag.ExitUsage || !strings.Contains(errs, "the path leaves the tree") {
		t.Errorf("replay of a path off the tree: exit %d\n%s", code, errs)
	}
}

// leaveTree copies the tree log at src to dst, moving the second node of
// the first path of two or more nodes to a node that is not its parent's
// child (the root's first child's sibling subtree), without validation.
func leaveTree(t *testing.T, src, dst string) string {
	t.Helper()
	r, err := data.OpenTree(src, data.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var rows []data.TreeLogRow
	moved := false
	for r.Next() {
		row := *r.Raw()
		row.Path, row.Emitted = slices.Clone(row.Path), slices.Clone(row.Emitted)
		row.Q, row.P = slices.Clone(row.Q), slices.Clone(row.P)
		row.NodeParent, row.NodeToken = slices.Clone(row.NodeParent), slices.Clone(row.NodeToken)
		row.NodeQ, row.NodeP = slices.Clone(row.NodeQ), slices.Clone(row.NodeP)
		if !moved && len(row.Path) >= 2 {
			for n := range row.NodeParent {
				if n > 0 && row.NodeParent[n] != row.Path[0] && row.NodeParent[n] > 0 {
					row.Path[1], row.Emitted[1] = int32(n), row.NodeToken[n]
					moved = true
					break
				}
			}
		}
		rows = append(rows, row)
	}
	r.Close()
	if r.Err() != nil || !moved {
		t.Fatalf("no path to move (%v)", r.Err())
	}
	f, err := os.Create(dst)
	if err != nil {
		t.Fatal(err)
	}
	w := parquet.NewGenericWriter[data.TreeLogRow](f, parquet.KeyValueMetadata(data.MetaSchemaVersion, strconv.Itoa(data.TreeSchemaVersion)))
	if _, err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	return dst
}

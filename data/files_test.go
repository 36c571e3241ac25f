package data_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/specsim/specsim/algos"
	"github.com/specsim/specsim/data"
	"github.com/specsim/specsim/internal/fsutil"
)

// jsonLines returns n valid JSON-lines rows (goodRow with steps 0..n-1).
func jsonLines(t *testing.T, n int) []string {
	t.Helper()
	var out []string
	for i := range n {
		r := goodRow()
		r.Step = int64(i)
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(b))
	}
	return out
}

// TestImportKeepsOutput (issue 12): an import with a bad row on line 4
// fails and leaves the existing output byte-identical (it used to be
// replaced by a 3-row log that still validated); an output equal to the
// input is refused before anything is written.
func TestImportKeepsOutput(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good, bad := filepath.Join(dir, "good.jsonl"), filepath.Join(dir, "bad.jsonl")
	lines := jsonLines(t, 6)
	os.WriteFile(good, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	lines[3] = strings.Replace(lines[3], `"vocab_size":3`, `"vocab_size":1`, 1)
	os.WriteFile(bad, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	out := filepath.Join(dir, "out.parquet")
	if n, err := data.ImportFile(good, out, data.Provenance{}, 0); err != nil || n != 6 {
		t.Fatalf("good import: %d rows, %v", n, err)
	}
	before, _ := os.ReadFile(out)
	if _, err := data.ImportFile(bad, out, data.Provenance{}, 0); err == nil || !strings.Contains(err.Error(), "line 4") {
		t.Fatalf("bad import: %v, want an error on line 4", err)
	}
	if after, _ := os.ReadFile(out); !bytes.Equal(before, after) {
		t.Errorf("a failed import changed the existing output")
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 3 {
		t.Errorf("files left behind: %v", ents)
	}
	inBefore, _ := os.ReadFile(good)
	if _, err := data.ImportFile(good, good, data.Provenance{}, 0); !errors.Is(err, fsutil.ErrOutputIsInput) {
		t.Errorf("import --in X --out X: %v, want ErrOutputIsInput", err)
	}
	if after, _ := os.ReadFile(good); !bytes.Equal(inBefore, after) {
		t.Errorf("import --in X --out X changed X")
	}
}

// TestLogSyntheticInterrupted: a cancelled log-synthetic leaves the
// previous file (or none), never a truncated log.
func TestLogSyntheticInterrupted(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out := filepath.Join(dir, "run.parquet")
	opt := data.SyntheticOptions{Source: "markov:V=4,order=1", Out: out,
		Run: data.RunConfig{Steps: 50, Gamma: 2, StepsPerPrompt: 10, Seed: 1, RunID: "r", Sampling: data.Sampling{Temperature: 1, TopP: 1}, Rule: algos.Token{}}}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := data.LogSynthetic(ctx, opt); err == nil {
		t.Fatal("a cancelled run returned no error")
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a cancelled first run left %s: %v", out, err)
	}
	if _, err := data.LogSynthetic(context.Background(), opt); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(out)
	opt.Run.Seed = 2
	if _, err := data.LogSynthetic(ctx, opt); err == nil {
		t.Fatal("a cancelled run returned no error")
	}
	if after, _ := os.ReadFile(out); !bytes.Equal(before, after) {
		t.Errorf("a cancelled run changed the previous log")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("files left behind: %v", ents)
	}
}

package experiments

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/specsim/specsim/internal/fsutil"
	"github.com/specsim/specsim/internal/job"
)

// TestExecuteLocksOut (issue 12): while one run holds --out D, a second
// run on D fails at once with ErrLocked (a usage error) and writes nothing.
func TestExecuteLocksOut(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "out")
	unlock, err := fsutil.LockDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	_, err = Execute(context.Background(), RunOptions{Target: "specs/small.toml", Out: dir, Seed: 2, Scale: 1})
	if !errors.Is(err, fsutil.ErrLocked) || !errors.Is(err, job.ErrUsage) {
		t.Fatalf("second run: %v, want ErrLocked marked as a usage error", err)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 || ents[0].Name() != fsutil.LockName {
		t.Errorf("the refused run wrote into %s: %v", dir, ents)
	}
}

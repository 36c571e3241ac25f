package sweep

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/specsim/specsim/internal/diag"
	"github.com/specsim/specsim/internal/fsutil"
)

// TestExecuteLocksOut (issue 12): while one run of a shard holds --out D,
// a second run of that shard on D fails at once with ErrLocked (a usage
// error) and writes nothing; a run of another shard may proceed.
func TestExecuteLocksOut(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "out")
	unlock, err := fsutil.Lock(dir, fsutil.LockName+"-shard-0-of-1", false)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	_, err = Execute(context.Background(), RunOptions{Target: "../specs/small.toml", Out: dir, Seed: 2, Scale: 1})
	if !errors.Is(err, fsutil.ErrLocked) || !errors.Is(err, diag.ErrUsage) {
		t.Fatalf("second run: %v, want ErrLocked marked as a usage error", err)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 || ents[0].Name() != fsutil.LockName+"-shard-0-of-1" {
		t.Errorf("the refused run wrote into %s: %v", dir, ents)
	}
}

// TestExecuteOtherSeedRefused: a run of another shard with another seed
// on the same --out is refused by the manifest check (the directory lock
// serialises that check), so no cells of two seeds share a directory.
func TestExecuteOtherSeedRefused(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "out")
	if _, err := Execute(context.Background(), RunOptions{Target: "../specs/small.toml", Out: dir, Seed: 2, Scale: 1, Shard: "0/2"}); err != nil {
		t.Fatal(err)
	}
	_, err := Execute(context.Background(), RunOptions{Target: "../specs/small.toml", Out: dir, Seed: 3, Scale: 1, Shard: "1/2"})
	if err == nil || !strings.Contains(err.Error(), "seed 2") {
		t.Fatalf("second shard with seed 3: %v, want a refusal naming the stored seed 2", err)
	}
}

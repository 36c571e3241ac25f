package results

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"github.com/specsim/specsim/internal/fsutil"
	"github.com/specsim/specsim/table"
)

// Layout of a sweep directory:
//
//	DIR/sweep.json            the manifest (ManifestName): spec, hash, seed, cells
//	DIR/cells/cell-000012.parquet   one file per finished cell (CellPath)
//
// Cell files are written atomically, so a killed run leaves only whole
// files (and possibly hidden .cell-*.tmp-* files, which every reader
// ignores); re-running computes only the cells without a file.
const (
	ManifestName = "sweep.json"
	CellsDir     = "cells"
)

// Manifest identifies the sweep a directory holds.
type Manifest struct {
	Experiment string `json:"experiment"`
	SpecHash   string `json:"spec_hash"`
	Spec       string `json:"spec"`
	Seed       uint64 `json:"seed"`
	Cells      int    `json:"cells"`
}

// maxManifest bounds a manifest's size: it holds a spec in canonical
// JSON, whose TOML file is bounded at 4 MiB (experiments/sweep's
// MaxSpecBytes).
const maxManifest = 16 << 20

// ReadManifest reads DIR/sweep.json; ok is false when there is none.
func ReadManifest(dir string) (m Manifest, ok bool, err error) {
	b, err := fsutil.ReadFile(filepath.Join(dir, ManifestName), maxManifest)
	if errors.Is(err, fs.ErrNotExist) {
		return m, false, nil
	}
	if err != nil {
		return m, false, err
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, false, fmt.Errorf("%s: %w", filepath.Join(dir, ManifestName), err)
	}
	return m, true, nil
}

// Dir is a sweep directory; it implements sweep.Store.
type Dir struct {
	Path string
	// Shard ("i/n") is recorded in every cell file (KeyShard).
	Shard string
	hash  string
	base  Meta
}

// OpenDir prepares dir for the sweep m describes (sweep.OpenStore
// makes m from a plan): it creates the directory and the manifest, or
// checks that an existing manifest is of the same spec and seed (an error
// naming both otherwise: use a fresh directory). shard ("i/n") is recorded
// in every cell file.
func OpenDir(dir string, m Manifest, shard string) (*Dir, error) {
	if err := fsutil.MkdirAll(filepath.Join(dir, CellsDir)); err != nil {
		return nil, err
	}
	// the temporary files of a killed run's cells and manifest
	fsutil.RemoveStale(dir)
	fsutil.RemoveStale(filepath.Join(dir, CellsDir))
	old, ok, err := ReadManifest(dir)
	if err != nil {
		return nil, err
	}
	if ok {
		if old.SpecHash != m.SpecHash || old.Experiment != m.Experiment {
			return nil, fmt.Errorf("%s holds a sweep of another spec (experiment %s, spec hash %.12s; this run: %s, %.12s); use a fresh output directory", dir, old.Experiment, old.SpecHash, m.Experiment, m.SpecHash)
		}
		if old.Seed != m.Seed {
			return nil, fmt.Errorf("%s holds a sweep with master seed %d, this run has seed %d; resume with seed %d or use a fresh output directory", dir, old.Seed, m.Seed, old.Seed)
		}
	} else {
		b, _ := json.MarshalIndent(m, "", "  ")
		if err := AtomicWrite(filepath.Join(dir, ManifestName), append(b, '\n')); err != nil {
			return nil, err
		}
	}
	rev, gover := Provenance()
	d := &Dir{Path: dir, Shard: shard, hash: m.SpecHash, base: Meta{
		// a cell names its spec by hash; the spec itself is in the
		// manifest, once (10k cells each carrying it took 1.3 GB)
		KeyKind: "cell", KeyExperiment: m.Experiment, KeySpecHash: m.SpecHash,
		KeySeed: strconv.FormatUint(m.Seed, 10), KeyCells: strconv.Itoa(m.Cells),
		KeyShard: shard, KeyGitRevision: rev, KeyGoVersion: gover,
	}}
	return d, nil
}

// CellPath is the file of cell idx.
func (d *Dir) CellPath(idx int) string {
	return filepath.Join(d.Path, CellsDir, fmt.Sprintf("cell-%06d.parquet", idx))
}

// Done reports whether cell idx has a file; a file of another sweep or
// cell, or an unreadable one, is an error naming it.
func (d *Dir) Done(idx int, c table.Cell) (bool, error) {
	path := d.CellPath(idx)
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	t, err := ReadFile(path)
	if err != nil {
		return false, fmt.Errorf("unreadable cell file: %w; delete it to recompute the cell", err)
	}
	m := t.Meta
	switch {
	case m[KeySpecHash] != d.hash:
		return false, fmt.Errorf("%s: metadata %s = %.12s differs from this sweep's %.12s; use a fresh output directory", path, KeySpecHash, m[KeySpecHash], d.hash)
	case m[KeySeed] != d.base[KeySeed]:
		return false, fmt.Errorf("%s: metadata %s = %s differs from this sweep's %s", path, KeySeed, m[KeySeed], d.base[KeySeed])
	case m[KeyCellID] != c.ID():
		return false, fmt.Errorf("%s: metadata %s = %q, expected %q", path, KeyCellID, m[KeyCellID], c.ID())
	}
	return true, nil
}

// Save writes cell idx's rows atomically to CellPath(idx).
func (d *Dir) Save(idx int, c table.Cell, rows []table.Row) error {
	meta := Meta{}
	for k, v := range d.base {
		meta[k] = v
	}
	meta[KeyCellIndex] = strconv.Itoa(idx)
	meta[KeyCellID] = c.ID()
	return WriteFile(d.CellPath(idx), rows, meta)
}

// CheckOutput checks an output file the user named, as every command
// does before it computes: fsutil.CheckOutput (a regular file or a new
// name in an existing directory, not one of inputs, not a lock), and not
// a sweep's bookkeeping: its manifest (DIR/sweep.json, which resuming and
// merging need) or a file in its cells directory. Errors are usage
// errors.
func CheckOutput(out string, inputs ...string) error {
	if err := fsutil.CheckOutput(out, inputs...); err != nil {
		return err
	}
	dir, base := filepath.Split(out)
	if dir == "" {
		dir = "."
	}
	exists := func(p string) bool { _, err := os.Lstat(p); return err == nil }
	if base == ManifestName && (exists(out) || exists(filepath.Join(dir, CellsDir))) {
		return fmt.Errorf("%w: %s is a sweep's manifest, which resuming and merging read; write the output elsewhere", fsutil.ErrOutputIsInput, out)
	}
	if filepath.Base(filepath.Clean(dir)) == CellsDir && exists(filepath.Join(dir, "..", ManifestName)) {
		return fmt.Errorf("%w: %s is inside a sweep's cells directory, where every file is read as a cell; write the output elsewhere", fsutil.ErrOutputIsInput, out)
	}
	return nil
}

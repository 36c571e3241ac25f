package results

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/specsim/specsim/table"
)

// MergeReport describes a merge.
type MergeReport struct {
	// Files are the cell files read; Duplicates counts cells found in more
	// than one file with identical rows.
	Files      int
	Duplicates int
	// Cells is the number of cells of the sweep, all present.
	Cells int
}

// provKeys must agree across all files merged (with the message naming
// the difference).
var provKeys = []struct{ key, what string }{
	{KeyExperiment, "experiment"},
	{KeySpecHash, "spec"},
	{KeySeed, "master seed"},
	{KeyCells, "cell count"},
}

// Merge reads every cell file under dir (recursively, so the outputs of
// shards gathered into sub-directories merge too) and returns one table:
// the rows of cells 0..N-1 in cell order, with merged provenance. It fails
// with an error naming the files for: a file that cannot be read, files of
// different experiments, specs, seeds or cell counts, a cell present twice
// with different rows, and missing cells (listed by index and key).
// Hidden temporary files of interrupted writes and merged tables
// (specsim.kind = merged) are skipped.
//
// Missing cells are named by index; MergeNamed also names them by key.
func Merge(dir string) (Table, MergeReport, error) { return MergeNamed(dir, nil) }

// CellNamer lists the cells of the sweep a merged table's metadata
// describes, or nil when it cannot.
type CellNamer func(Meta) []table.Cell

// MergeNamed is Merge with missing cells named by key through cells (nil:
// by index only).
func MergeNamed(dir string, cells CellNamer) (Table, MergeReport, error) {
	var rep MergeReport
	paths, manifests, err := cellFiles(dir)
	if err != nil {
		return Table{}, rep, err
	}
	cs := cellSet{byCell: map[int]Table{}, from: map[int]string{}, revs: map[string]bool{}, gos: map[string]bool{}}
	for _, p := range paths {
		if err := cs.add(p, &rep); err != nil {
			return Table{}, rep, err
		}
	}
	if rep.Files == 0 {
		return Table{}, rep, fmt.Errorf("%s holds no cell files (*.parquet); run 'simulate run NAME|SPEC' into %s first", dir, dir)
	}
	meta := Meta{}
	for k, v := range cs.first.Meta {
		meta[k] = v
	}
	if spec := cs.spec(manifests); spec != "" {
		meta[KeySpec] = spec
	}
	n, err := strconv.Atoi(cs.first.Meta[KeyCells])
	if err != nil || n < 1 {
		return Table{}, rep, fmt.Errorf("%s: metadata %s = %q is not a cell count", cs.firstPath, KeyCells, cs.first.Meta[KeyCells])
	}
	rep.Cells = n
	if err := cs.complete(dir, n, meta, cells); err != nil {
		return Table{}, rep, err
	}
	out, err := cs.merged(n, meta)
	if err != nil {
		return Table{}, rep, err
	}
	return out, rep, nil
}

// cellFiles lists the cell files under dir (sorted; hidden temporary
// files skipped) and the directories that hold a sweep manifest.
func cellFiles(dir string) (paths, manifests []string, err error) {
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && d.Name() == ManifestName {
			manifests = append(manifests, filepath.Dir(path))
		}
		if d.IsDir() || IsTemp(d.Name()) || !strings.HasSuffix(d.Name(), ".parquet") {
			return nil
		}
		paths = append(paths, path)
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	sort.Strings(paths)
	return paths, manifests, nil
}

// cellSet gathers the cells of one sweep: the first file read and its
// path, each cell's table and file by index, and the git revisions and
// Go versions that wrote them.
type cellSet struct {
	first     Table
	firstPath string
	byCell    map[int]Table
	from      map[int]string
	revs, gos map[string]bool
}

// add reads the file p into the set, counting it in rep: a merged table
// is skipped, a file of another kind or sweep is an error, and a cell
// seen before must have the same rows (it is then counted a duplicate).
func (cs *cellSet) add(p string, rep *MergeReport) error {
	t, err := ReadFile(p)
	if err != nil {
		return fmt.Errorf("unreadable shard file: %w", err)
	}
	if t.Meta[KeyKind] == "merged" {
		return nil
	}
	if t.Meta[KeyKind] != "cell" {
		return fmt.Errorf("%s: metadata %s = %q; expected a cell file written by 'simulate run' into a directory", p, KeyKind, t.Meta[KeyKind])
	}
	rep.Files++
	if cs.firstPath == "" {
		cs.first, cs.firstPath = t, p
	}
	for _, pk := range provKeys {
		if t.Meta[pk.key] != cs.first.Meta[pk.key] {
			return fmt.Errorf("%s and %s come from different sweeps: %s differs (%s: %.16s vs %.16s); merge only the outputs of one spec and seed", cs.firstPath, p, pk.what, pk.key, cs.first.Meta[pk.key], t.Meta[pk.key])
		}
	}
	idx, err := strconv.Atoi(t.Meta[KeyCellIndex])
	if err != nil {
		return fmt.Errorf("%s: metadata %s = %q is not a cell index", p, KeyCellIndex, t.Meta[KeyCellIndex])
	}
	if prev, dup := cs.byCell[idx]; dup {
		if err := sameRows(prev.Rows, t.Rows); err != nil {
			return fmt.Errorf("cell %d (%s) is in %s and %s with different results: %v", idx, t.Meta[KeyCellID], cs.from[idx], p, err)
		}
		rep.Duplicates++
		return nil
	}
	cs.byCell[idx], cs.from[idx] = t, p
	cs.revs[t.Meta[KeyGitRevision]] = true
	cs.gos[t.Meta[KeyGoVersion]] = true
	return nil
}

// spec is the sweep's spec: cell files name it by hash, and the sweep's
// manifest (in dir, or in a gathered shard's directory under it) holds
// it; files of earlier versions carried it themselves.
func (cs *cellSet) spec(manifests []string) string {
	spec := cs.first.Meta[KeySpec]
	for _, md := range manifests {
		if spec != "" {
			break
		}
		if m, ok, err := ReadManifest(md); err == nil && ok && m.SpecHash == cs.first.Meta[KeySpecHash] {
			spec = m.Spec
		}
	}
	return spec
}

// complete fails unless the set holds exactly cells 0..n-1: a cell
// outside them is named by file, missing cells by index (and key through
// cells).
func (cs *cellSet) complete(dir string, n int, meta Meta, cells CellNamer) error {
	var missing []int
	for i := range n {
		if _, ok := cs.byCell[i]; !ok {
			missing = append(missing, i)
		}
	}
	for i := range cs.byCell {
		if i < 0 || i >= n {
			return fmt.Errorf("%s: cell index %d outside the sweep's %d cells", cs.from[i], i, n)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%d of %d cells are missing: %s; re-run the shards that own them ('simulate run' into %s resumes)", len(missing), n, describeCells(meta, missing, cells), dir)
	}
	return nil
}

// merged is the merged table: the rows of cells 0..n-1 in order, with
// the sweep's provenance from meta and the set of revisions and Go
// versions that wrote them.
func (cs *cellSet) merged(n int, meta Meta) (Table, error) {
	out := Table{Meta: Meta{}}
	for _, k := range []string{KeyExperiment, KeySpecHash, KeySpec, KeySeed, KeyCells} {
		if meta[k] != "" || k != KeySpec {
			out.Meta[k] = meta[k]
		}
	}
	out.Meta[KeyKind] = "merged"
	out.Meta[KeyGitRevision] = joinSet(cs.revs)
	out.Meta[KeyGoVersion] = joinSet(cs.gos)
	for i := range n {
		out.Rows = append(out.Rows, cs.byCell[i].Rows...)
	}
	var err error
	if out.Columns, err = Columns(out.Rows); err != nil {
		return Table{}, err
	}
	return out, nil
}

// describeCells names up to 8 cells by index and, when the stored spec
// can be expanded, by key.
func describeCells(meta Meta, idx []int, namer CellNamer) string {
	var cells []table.Cell
	if namer != nil {
		cells = namer(meta)
	}
	var parts []string
	for i, c := range idx {
		if i == 8 {
			parts = append(parts, fmt.Sprintf("and %d more", len(idx)-8))
			break
		}
		if c < len(cells) {
			parts = append(parts, fmt.Sprintf("%d (%s)", c, cells[c].ID()))
		} else {
			parts = append(parts, strconv.Itoa(c))
		}
	}
	return strings.Join(parts, ", ")
}

func joinSet(m map[string]bool) string {
	var s []string
	for k := range m {
		s = append(s, k)
	}
	sort.Strings(s)
	return strings.Join(s, ",")
}

// sameRows compares two row lists bit for bit and describes the first
// difference.
func sameRows(a, b []table.Row) error {
	if len(a) != len(b) {
		return fmt.Errorf("%d rows vs %d", len(a), len(b))
	}
	for i := range a {
		if len(a[i]) != len(b[i]) {
			return fmt.Errorf("row %d has %d columns vs %d", i, len(a[i]), len(b[i]))
		}
		for j := range a[i] {
			x, y := a[i][j], b[i][j]
			if x.K != y.K || !Equal(x.V, y.V) {
				return fmt.Errorf("row %d column %s: %v vs %v", i, x.K, x.V, y.V)
			}
		}
	}
	return nil
}

// SameRows reports whether two tables' rows are identical bit for bit,
// describing the first difference otherwise.
func SameRows(a, b []table.Row) error { return sameRows(a, b) }

package sim_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// module is the project's import path.
const module = "github.com/specsim/specsim"

// allowedImports lists, for the packages under sim/ with a narrower rule,
// the only project packages they may import; every other package under
// sim/ may import packages under sim/ only.
var allowedImports = map[string][]string{
	"sim":        {},                                                                     // the vocabulary imports no project package
	"sim/check":  {"sim", "sim/stattest", "sim/run", "internal/diag", "internal/binenc"}, // the verdict engine: no registries, no names
	"sim/source": {"sim"},                                                                // sources know no rules
	"sim/run":    {"sim"},                                                                // the round loop knows only the vocabulary
}

// leaves are the project's ground floor: packages that import no project
// package (internal/diag: the kinds of failure and warnings;
// internal/binenc: the states' binary payloads), which every package
// under sim/ but sim itself may use.
var leaves = []string{"internal/diag", "internal/binenc"}

// TestImportsPointDown: no package under sim/ imports a project package
// outside sim/ (algos, data, experiments, ...), and sim, sim/check,
// sim/source and sim/run import only what allowedImports says. It parses the imports
// of every non-test Go file under sim/ (all build tags), so it needs no
// go command.
func TestImportsPointDown(t *testing.T) {
	t.Parallel()
	fset := token.NewFileSet()
	files := 0
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != "." && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		files++
		pkg := filepath.ToSlash(filepath.Join("sim", filepath.Dir(path)))
		for _, im := range f.Imports {
			ip, _ := strconv.Unquote(im.Path.Value)
			rel, ok := strings.CutPrefix(ip, module+"/")
			if !ok {
				continue // the standard library or a dependency
			}
			if allowed, narrow := allowedImports[pkg]; narrow {
				if !slices.Contains(allowed, rel) {
					t.Errorf("%s imports %s; package %s may import only %v of this project", path, ip, pkg, allowed)
				}
			} else if rel != "sim" && !strings.HasPrefix(rel, "sim/") && !slices.Contains(leaves, rel) {
				t.Errorf("%s imports %s; packages under sim/ import no project package outside sim/", path, ip)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 20 {
		t.Fatalf("parsed %d files under sim/; the walk missed the tree", files)
	}
}

package layers_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/specsim/specsim/internal/layers"
)

const module = "github.com/specsim/specsim"

// TestImportsPointDown: every package of the module has a floor, and every
// import of a non-test file goes to a lower floor. It reads the imports of
// every Go file under the module root (all build tags), skipping testdata,
// hidden directories and nested modules (examples/gorule), so it needs no
// go command.
func TestImportsPointDown(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	seen := map[string]bool{}
	edges := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel != "." && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") || rel == "examples") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		pkg := filepath.ToSlash(filepath.Dir(rel))
		floor, ok := layers.Floors[pkg]
		if !ok {
			if !seen[pkg] {
				t.Errorf("package %s has no floor: place it in layers.Floors", pkg)
			}
			seen[pkg] = true
			return nil
		}
		seen[pkg] = true
		for _, im := range f.Imports {
			ip, _ := strconv.Unquote(im.Path.Value)
			dep, ok := strings.CutPrefix(ip, module+"/")
			if !ok {
				continue // the standard library or a dependency
			}
			edges++
			df, known := layers.Floors[dep]
			switch {
			case !known:
				t.Errorf("%s imports %s, which has no floor", rel, dep)
			case df >= floor:
				t.Errorf("%s (floor %d) imports %s (floor %d): imports must point down", rel, floor, dep, df)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for pkg := range layers.Floors {
		if !seen[pkg] {
			t.Errorf("layers.Floors places %s, which has no Go file", pkg)
		}
	}
	if edges < 100 {
		t.Errorf("only %d project imports found: is the walk reading the module?", edges)
	}
}

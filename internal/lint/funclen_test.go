package lint_test

import (
	"bufio"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// maxLines is the longest a non-test function may be: the lines from its
// func keyword to its closing brace, less one (as the before-stop hook
// counts). Orchestrators longer than this split into validate, build, run
// and assemble steps.
const maxLines = 80

// allowFile lists the functions allowed to be longer for now, one
// "path:Func" (methods "path:Type.Method") a line, each after a comment
// saying why; the list only shrinks (an entry that is no longer long
// fails the test, so it is removed when its function is split).
const allowFile = "longfuncs.txt"

// TestFunctionLength fails on a non-test function of the module longer
// than maxLines that the allow-list does not name, and on an allow-list
// entry whose function is no longer long or no longer exists.
func TestFunctionLength(t *testing.T) {
	t.Parallel()
	allowed := readAllow(t)
	long := longFunctions(t, filepath.Join("..", ".."))
	for _, f := range long {
		if !allowed[f.key] {
			t.Errorf("%s is %d lines (limit %d): split it into steps (validate, build, run, assemble), or, if it must stay whole, add %q with a comment saying why to internal/lint/%s",
				f.key, f.lines, maxLines, f.key, allowFile)
		}
		delete(allowed, f.key)
	}
	var stale []string
	for k := range allowed {
		stale = append(stale, k)
	}
	sort.Strings(stale)
	for _, k := range stale {
		t.Errorf("internal/lint/%s names %s, which is no longer over %d lines (or gone): remove the entry", allowFile, k, maxLines)
	}
}

type longFunc struct {
	key   string
	lines int
}

// longFunctions returns the non-test functions under root longer than
// maxLines, skipping testdata, hidden directories and nested modules.
func longFunctions(t *testing.T, root string) []longFunc {
	t.Helper()
	fset := token.NewFileSet()
	var out []longFunc
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
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			n := fset.Position(fn.End()).Line - fset.Position(fn.Pos()).Line
			if n > maxLines {
				out = append(out, longFunc{rel + ":" + funcName(fn), n})
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// funcName is Name, or Type.Name for a method.
func funcName(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return fn.Name.Name
	}
	typ := fn.Recv.List[0].Type
	for {
		switch x := typ.(type) {
		case *ast.StarExpr:
			typ = x.X
			continue
		case *ast.IndexExpr:
			typ = x.X
			continue
		case *ast.IndexListExpr:
			typ = x.X
			continue
		case *ast.Ident:
			return x.Name + "." + fn.Name.Name
		}
		return fmt.Sprintf("%T.%s", typ, fn.Name.Name)
	}
}

// readAllow reads the allow-list: every entry must follow a comment.
func readAllow(t *testing.T) map[string]bool {
	t.Helper()
	f, err := os.Open(allowFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	allowed := map[string]bool{}
	commented := false
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		s := strings.TrimSpace(sc.Text())
		switch {
		case s == "":
			commented = false
		case strings.HasPrefix(s, "#"):
			commented = true
		default:
			if !commented {
				t.Errorf("%s:%d: %s has no comment saying why it may be long", allowFile, line, s)
			}
			allowed[s] = true
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return allowed
}

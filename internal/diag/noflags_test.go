package diag

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// libraries are the directories (relative to the repository root, with
// their subdirectories) whose errors must name fields, never command-line
// flags: cli/ and cmd/ map fields to flags (cliutil.FlagNames).
var libraries = []string{"algos", "data", "experiments", "external", "lm", "plots", "report", "seq", "sim", "smc", "table",
	"internal/diag", "internal/fsutil", "internal/gitrev", "internal/job"}

// foreignFlags are flags of other programs that errors may quote (sbatch's).
var foreignFlags = map[string]bool{"--parsable": true, "--array": true}

// flagRe matches a long flag, or one of simulate's one-letter flags (-p,
// -q, -k, -n, -L; other one-letter flags quoted in errors are other
// programs', such as go build -o and python3 -m).
var flagRe = regexp.MustCompile(`(^|[\s('"])(--[a-z][a-z0-9-]*|-[pqknL]\b)`)

// TestLibrariesNameNoFlags: no error a library makes (fmt.Errorf,
// errors.New, Param, New) mentions a flag such as --workers or -k in its
// format string.
func TestLibrariesNameNoFlags(t *testing.T) {
	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	n := 0
	for _, lib := range libraries {
		err := filepath.WalkDir(filepath.Join(root, lib), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			f, err := parser.ParseFile(fset, path, nil, 0)
			if err != nil {
				return err
			}
			n++
			ast.Inspect(f, func(x ast.Node) bool {
				call, ok := x.(*ast.CallExpr)
				if !ok || len(call.Args) == 0 {
					return true
				}
				sel, ok := call.Fun.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				pkg, _ := sel.X.(*ast.Ident)
				var arg ast.Expr
				switch {
				case pkg == nil:
					return true
				case pkg.Name == "fmt" && sel.Sel.Name == "Errorf", pkg.Name == "errors" && sel.Sel.Name == "New":
					arg = call.Args[0]
				case pkg.Name == "diag" && (sel.Sel.Name == "Param" || sel.Sel.Name == "New") && len(call.Args) > 1:
					arg = call.Args[1]
				default:
					return true
				}
				lit, ok := arg.(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					return true
				}
				s, _ := strconv.Unquote(lit.Value)
				for _, m := range flagRe.FindAllStringSubmatch(s, -1) {
					if f := m[2]; !foreignFlags[f] {
						t.Errorf("%s: an error names the flag %s (%q); name the field, and let the front end show the flag", fset.Position(lit.Pos()), f, s)
					}
				}
				return true
			})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if n < 100 {
		t.Fatalf("only %d library files read; is the repository layout as expected?", n)
	}
}

package main

import (
	"bufio"
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/urfave/cli/v2"

	simcli "github.com/specsim/specsim/cli"
	"github.com/specsim/specsim/data"
	"github.com/specsim/specsim/data/results"
	"github.com/specsim/specsim/experiments/sweep"
)

// TestDocs keeps README.md and docs/*.md true to the code. It reads every
// document and checks what it shows:
//
//   - every simulate and report command line (in code blocks and inline
//     code) names an existing subcommand and only flags defined for it, on
//     the apps as cmd/simulate and cmd/report build them;
//   - every 'go test ./PKG' names a package whose tests its -run, -bench
//     and -fuzz patterns match, and whose test files define its other flags;
//   - every 'python3 FILE.py' flag is defined by the script, every
//     'make TARGET' by the Makefile;
//   - every repository path in inline code, shell blocks or links exists
//     (paths under a gitignored name are outputs and are skipped), and
//     every link to a heading resolves;
//   - every qualified Go identifier in inline code (sim.NewRand) is
//     declared by that package, and every "package `x/y`" (and every
//     package of the architecture page's table) exists;
//   - every TOML block is a valid sweep spec;
//   - the log schema and result metadata tables of docs/formats.md list
//     exactly the columns of data.LogRow and the keys of data/results;
//
// and runs the README's examples in-process, comparing exit codes and the
// output shown ('…' in a shown line stands for any text), and the commands
// of docs/external.md's first block at small sizes (runExternal).
func TestDocs(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no docs/*.md under %s (%v)", root, err)
	}
	files = append([]string{filepath.Join(root, "README.md")}, files...)
	var docs []*doc
	for _, f := range files {
		d, err := readDoc(root, f)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, d)
	}
	r := newRepo(root)

	t.Run("commands", func(t *testing.T) {
		n := 0
		for _, d := range docs {
			for _, c := range d.commands() {
				n++
				if err := r.checkCommand(c.words); err != nil {
					t.Errorf("%s:%d: %s: %v", d.name, c.line, strings.Join(c.words, " "), err)
				}
			}
		}
		if n < 50 {
			t.Errorf("found only %d command lines in the docs; the parser has lost them", n)
		}
		t.Logf("%d command lines", n)
	})
	t.Run("paths", func(t *testing.T) {
		n := 0
		for _, d := range docs {
			for _, p := range d.paths(r) {
				n++
				if err := r.checkPath(p.text, p.base); err != nil {
					t.Errorf("%s:%d: %v", d.name, p.line, err)
				}
			}
		}
		if n < 50 {
			t.Errorf("found only %d repository paths in the docs; the parser has lost them", n)
		}
		t.Logf("%d repository paths", n)
	})
	t.Run("identifiers", func(t *testing.T) {
		n := 0
		for _, d := range docs {
			for _, p := range d.paras {
				for _, m := range inlineRE.FindAllStringSubmatch(p.text, -1) {
					for _, id := range identRE.FindAllStringSubmatch(m[1], -1) {
						dir, ok := r.pkgDir(id[1])
						if !ok {
							continue
						}
						n++
						if !r.declares(dir, id[2]) {
							t.Errorf("%s:%d: %s.%s: package %s declares no %s", d.name, p.line, id[1], id[2], rel(root, dir), id[2])
						}
					}
				}
			}
		}
		if n < 30 {
			t.Errorf("found only %d Go identifiers in the docs; the parser has lost them", n)
		}
		t.Logf("%d Go identifiers", n)
	})
	t.Run("packages", func(t *testing.T) {
		n := 0
		for _, d := range docs {
			for _, p := range d.paras {
				names := packageRE.FindAllStringSubmatch(p.text, -1)
				// the first column of the architecture page's package table
				if filepath.Base(d.path) == "architecture.md" && strings.HasPrefix(p.text, "| `") {
					cell := strings.Split(p.text, "|")[1]
					names = append(names, inlineRE.FindAllStringSubmatch(cell, -1)...)
				}
				for _, m := range names {
					n++
					if !r.isPackage(m[1]) {
						t.Errorf("%s:%d: package %s does not exist", d.name, p.line, m[1])
					}
				}
			}
		}
		if n < 25 {
			t.Errorf("found only %d package names in the docs; the parser has lost them", n)
		}
		t.Logf("%d package names", n)
	})
	t.Run("links", func(t *testing.T) {
		anchors := map[string]map[string]bool{}
		for _, d := range docs {
			anchors[d.path] = d.anchors()
		}
		for _, d := range docs {
			for _, l := range d.links {
				file, frag, _ := strings.Cut(l.target, "#")
				if frag == "" {
					continue
				}
				target := d.path
				if file != "" {
					target = filepath.Join(filepath.Dir(d.path), file)
				}
				a, ok := anchors[target]
				if !ok {
					t.Errorf("%s:%d: link %s: anchors are checked only within README.md and docs/", d.name, l.line, l.target)
				} else if !a[frag] {
					t.Errorf("%s:%d: link %s: %s has no heading #%s", d.name, l.line, l.target, rel(root, target), frag)
				}
			}
		}
	})
	t.Run("toml", func(t *testing.T) {
		for _, d := range docs {
			for _, b := range d.blocks {
				if b.lang != "toml" {
					continue
				}
				spec, err := sweep.ParseSpec(strings.Join(b.lines, "\n"))
				if err == nil {
					_, err = sweep.NewPlan(spec, 1)
				}
				if err != nil {
					t.Errorf("%s:%d: the sweep spec shown is invalid: %v", d.name, b.line, err)
				}
			}
		}
	})
	t.Run("formats", func(t *testing.T) {
		var formats *doc
		for _, d := range docs {
			if filepath.Base(d.path) == "formats.md" {
				formats = d
			}
		}
		if formats == nil {
			t.Fatal("docs/formats.md is missing")
		}
		var cols []string
		row := reflect.TypeFor[data.LogRow]()
		for i := range row.NumField() {
			tag := row.Field(i).Tag.Get("parquet")
			name, _, _ := strings.Cut(tag, ",")
			cols = append(cols, name)
		}
		if got := formats.tableKeys("Step logs"); !slices.Equal(sorted(got), sorted(cols)) {
			t.Errorf("docs/formats.md, Step logs: the table lists columns %v; data.LogRow has %v", got, cols)
		}
		keys := []string{results.KeyFormat, results.KeyKind, results.KeyExperiment, results.KeySpecHash, results.KeySpec,
			results.KeySeed, results.KeyCells, results.KeyCellIndex, results.KeyCellID, results.KeyShard,
			results.KeyGitRevision, results.KeyGoVersion, results.KeyColumns}
		if got := formats.tableKeys("Result tables"); !slices.Equal(sorted(got), sorted(keys)) {
			t.Errorf("docs/formats.md, Result tables: the table lists keys %v; data/results has %v", got, keys)
		}
	})
	// Not in parallel: it changes the working directory and PYTHONPATH.
	t.Run("external", func(t *testing.T) {
		runExternal(t, r, docNamed(t, docs, "external.md"))
	})
	// Last, and not in parallel: it changes the working directory.
	t.Run("examples", func(t *testing.T) {
		runExamples(t, r, docs[0])
	})
}

// doc is one Markdown document: its fenced blocks, its paragraphs outside
// them (for inline code), its headings and its links.
type doc struct {
	path, name string
	blocks     []block
	paras      []para
	headings   []string
	links      []link
}

type block struct {
	lang  string
	line  int // line of the first content line
	lines []string
	// section is the text of the last ## heading before the block.
	section string
}

type para struct {
	line int
	text string
}

type link struct {
	line   int
	target string
}

var (
	linkRE   = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	inlineRE = regexp.MustCompile("`([^`]+)`")
)

func readDoc(root, path string) (*doc, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	d := &doc{path: path, name: rel(root, path)}
	var cur *block
	var p *para
	section := ""
	flush := func() {
		if p != nil {
			d.paras = append(d.paras, *p)
			p = nil
		}
	}
	for i, line := range strings.Split(string(raw), "\n") {
		n := i + 1
		if cur != nil {
			if strings.HasPrefix(line, "```") {
				d.blocks = append(d.blocks, *cur)
				cur = nil
			} else {
				cur.lines = append(cur.lines, line)
			}
			continue
		}
		if lang, ok := strings.CutPrefix(line, "```"); ok {
			flush()
			cur = &block{lang: strings.TrimSpace(lang), line: n + 1, section: section}
			continue
		}
		if h, ok := strings.CutPrefix(line, "#"); ok && (strings.HasPrefix(h, " ") || strings.HasPrefix(h, "#")) {
			flush()
			title := strings.TrimSpace(strings.TrimLeft(line, "#"))
			d.headings = append(d.headings, title)
			if strings.HasPrefix(line, "## ") {
				section = title
			}
			d.paras = append(d.paras, para{n, title})
			continue
		}
		if strings.TrimSpace(line) == "" {
			flush()
			continue
		}
		for _, m := range linkRE.FindAllStringSubmatch(inlineRE.ReplaceAllString(line, ""), -1) {
			d.links = append(d.links, link{n, m[1]})
		}
		if p == nil {
			p = &para{line: n, text: line}
		} else if strings.HasPrefix(strings.TrimSpace(line), "|") {
			// a table row: a paragraph of its own, so errors name its line
			flush()
			p = &para{line: n, text: line}
		} else {
			p.text += " " + line
		}
	}
	flush()
	if cur != nil {
		return nil, fmt.Errorf("%s: the code block opened on line %d is not closed", d.name, cur.line-1)
	}
	return d, nil
}

// anchors returns GitHub's anchors of the document's headings.
func (d *doc) anchors() map[string]bool {
	a := map[string]bool{}
	for _, h := range d.headings {
		var b strings.Builder
		for _, r := range strings.ToLower(h) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		a[b.String()] = true
	}
	return a
}

// tableKeys returns the first column (backticks removed) of the first table
// in the section titled title.
func (d *doc) tableKeys(title string) []string {
	raw, _ := os.ReadFile(d.path)
	in, seen := false, false
	var keys []string
	for _, line := range strings.Split(string(raw), "\n") {
		if strings.HasPrefix(line, "#") {
			in = strings.TrimSpace(strings.TrimLeft(line, "#")) == title
			continue
		}
		if !in {
			continue
		}
		if !strings.HasPrefix(line, "|") {
			if seen {
				break
			}
			continue
		}
		seen = true
		cell := strings.TrimSpace(strings.Split(line, "|")[1])
		if k, ok := strings.CutPrefix(cell, "`"); ok {
			keys = append(keys, strings.TrimSuffix(k, "`"))
		}
	}
	return keys
}

// cmdLine is one simple command shown in a document.
type cmdLine struct {
	line  int
	words []string
	// exit is the exit status a '# exit status N' comment promises.
	exit int
}

var (
	exitRE = regexp.MustCompile(`#\s*exit status (\d+)`)
	envRE  = regexp.MustCompile(`^[A-Z_][A-Z0-9_]*=`)
)

// commands returns the command lines of the document's shell blocks and
// of its inline code that start with a command the test knows.
func (d *doc) commands() []cmdLine {
	var out []cmdLine
	for _, b := range d.blocks {
		if !isShell(b.lang) {
			continue
		}
		for _, l := range b.logicalLines() {
			out = append(out, splitCommands(l.text, b.line+l.index)...)
		}
	}
	for _, p := range d.paras {
		for _, m := range inlineRE.FindAllStringSubmatch(p.text, -1) {
			out = append(out, splitCommands(m[1], p.line)...)
		}
	}
	var kept []cmdLine
	for _, c := range out {
		if known(c.words) {
			kept = append(kept, c)
		}
	}
	return kept
}

func isShell(lang string) bool {
	return lang == "" || lang == "sh" || lang == "bash" || lang == "console"
}

type logical struct {
	index int // offset of its first line in the block
	text  string
}

// logicalLines joins lines continued with a backslash and removes a
// leading "$ " prompt.
func (b block) logicalLines() []logical {
	var out []logical
	var cur *logical
	for i, l := range b.lines {
		if cur == nil {
			cur = &logical{index: i}
			l = strings.TrimPrefix(strings.TrimSpace(l), "$ ")
		}
		if s, ok := strings.CutSuffix(strings.TrimRight(l, " "), `\`); ok {
			cur.text += s + " "
			continue
		}
		cur.text += l
		out = append(out, *cur)
		cur = nil
	}
	if cur != nil {
		out = append(out, *cur)
	}
	return out
}

// splitCommands splits a shell line into simple commands (at &&, ||, ;
// and |, outside quotes), drops comments and leading VAR=value words, and
// reads a '# exit status N' comment.
func splitCommands(s string, line int) []cmdLine {
	exit := 0
	if m := exitRE.FindStringSubmatch(s); m != nil {
		exit, _ = strconv.Atoi(m[1])
	}
	var out []cmdLine
	var words []string
	var w strings.Builder
	inWord := false
	var quote rune
	end := func() {
		if inWord {
			words = append(words, w.String())
			w.Reset()
			inWord = false
		}
	}
	endCmd := func() {
		end()
		for len(words) > 0 && envRE.MatchString(words[0]) {
			words = words[1:]
		}
		if len(words) > 0 {
			out = append(out, cmdLine{line: line, words: words, exit: exit})
		}
		words = nil
	}
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				w.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == '#' && !inWord:
			endCmd()
			return out
		case r == ';' || r == '|' || r == '&':
			endCmd()
			for i+1 < len(rs) && (rs[i+1] == '|' || rs[i+1] == '&') {
				i++
			}
		case unicode.IsSpace(r):
			end()
		default:
			w.WriteRune(r)
			inWord = true
		}
	}
	endCmd()
	return out
}

// program returns which program a command runs and the index of its first
// argument: simulate, report, go-test, python, make, or "".
func program(words []string) (string, int) {
	if len(words) == 0 {
		return "", 0
	}
	switch w := words[0]; {
	case w == "simulate" || strings.HasSuffix(w, "/simulate"):
		return "simulate", 1
	case w == "report" || strings.HasSuffix(w, "/report") && !strings.Contains(w, "cmd/"):
		return "report", 1
	case w == "go" && len(words) > 2 && words[1] == "run" && strings.TrimSuffix(words[2], "/") == "./cmd/simulate":
		return "simulate", 3
	case w == "go" && len(words) > 2 && words[1] == "run" && strings.TrimSuffix(words[2], "/") == "./cmd/report":
		return "report", 3
	case w == "go" && len(words) > 1 && words[1] == "test":
		return "go-test", 2
	case w == "python3" && len(words) > 1 && strings.HasSuffix(words[1], ".py"):
		return "python", 1
	case w == "make" && len(words) > 1:
		return "make", 1
	}
	return "", 0
}

// known reports whether the command is one the test checks: a program it
// knows with at least one argument (a bare "simulate" in prose is a name).
func known(words []string) bool {
	p, i := program(words)
	return p != "" && len(words) > i
}

// repo answers questions about the repository: its apps, packages, test
// functions, test flags and paths.
type repo struct {
	root     string
	pkgs     map[string][]string
	decls    map[string]map[string]bool
	apps     map[string]*cli.App
	topLevel map[string]bool
	tests    map[string]*pkgTests
}

type pkgTests struct {
	funcs []string
	flags map[string]bool
	err   error
}

func newRepo(root string) *repo {
	r := &repo{root: root, apps: map[string]*cli.App{
		"simulate": simcli.NewApp(io.Discard, io.Discard),
		"report":   newApp(io.Discard, io.Discard),
	}, topLevel: map[string]bool{}, tests: map[string]*pkgTests{}}
	ignored := gitignored(root)
	entries, _ := os.ReadDir(root)
	for _, e := range entries {
		if !ignored[e.Name()] {
			r.topLevel[e.Name()] = true
		}
	}
	return r
}

// gitignored returns the names that dir's .gitignore ignores outright
// ("/name/", "name/" or "name" lines without wildcards).
func gitignored(dir string) map[string]bool {
	out := map[string]bool{}
	f, err := os.Open(filepath.Join(dir, ".gitignore"))
	if err != nil {
		return out
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		l := strings.Trim(strings.TrimSpace(s.Text()), "/")
		if l != "" && !strings.ContainsAny(l, "*?[!#/") {
			out[l] = true
		}
	}
	return out
}

// placeholderRE matches a word the docs write for "any value": COMMAND,
// ./PKG, FILE.py, NAME|SPEC.
var placeholderRE = regexp.MustCompile(`^(\./)?[A-Z][A-Z0-9_|]*(\.[a-z]+)?$`)

func (r *repo) checkCommand(words []string) error {
	prog, i := program(words)
	args := words[i:]
	if (prog == "go-test" || prog == "python") && placeholderRE.MatchString(args[0]) {
		return nil
	}
	switch prog {
	case "simulate", "report":
		return checkApp(r.apps[prog], args)
	case "go-test":
		return r.checkGoTest(args)
	case "python":
		return r.checkPython(args)
	case "make":
		raw, err := os.ReadFile(filepath.Join(r.root, "Makefile"))
		if err != nil {
			return err
		}
		if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(args[0]) + `:`).Match(raw) {
			return fmt.Errorf("the Makefile has no target %q", args[0])
		}
	}
	return nil
}

// flagWord returns the flag name a word uses ("" if it is not a flag):
// "[--seed" and "--replacement=true|false]" name seed and replacement.
func flagWord(w string) string {
	w = strings.Trim(w, "[](),")
	if !strings.HasPrefix(w, "-") || w == "-" || w == "--" {
		return ""
	}
	if _, err := strconv.ParseFloat(w, 64); err == nil {
		return ""
	}
	name, _, _ := strings.Cut(strings.TrimLeft(w, "-"), "=")
	return name
}

func flagNames(fs []cli.Flag) map[string]cli.Flag {
	m := map[string]cli.Flag{}
	for _, f := range fs {
		for _, n := range f.Names() {
			m[n] = f
		}
	}
	return m
}

// checkApp checks that args name a subcommand of app and only flags it
// (or the app, before the subcommand) defines.
func checkApp(app *cli.App, args []string) error {
	global := flagNames(app.Flags)
	if app.Version != "" && !app.HideVersion { // urfave/cli adds --version (-v)
		for k, f := range flagNames([]cli.Flag{cli.VersionFlag}) {
			global[k] = f
		}
	}
	var cmd *cli.Command
	i := 0
	for ; i < len(args); i++ {
		name := flagWord(args[i])
		if name == "" {
			break
		}
		f, ok := global[name]
		if !ok && name != "help" && name != "h" {
			return fmt.Errorf("%s has no global flag --%s (flags go after the command)", app.Name, name)
		}
		if v, ok := f.(cli.DocGenerationFlag); ok && v.TakesValue() && !strings.Contains(args[i], "=") {
			i++
		}
	}
	if i == len(args) {
		return nil
	}
	name := strings.Trim(args[i], "[]")
	if name == "help" || name == "h" || placeholderRE.MatchString(name) {
		return nil
	}
	if cmd = app.Command(name); cmd == nil {
		return fmt.Errorf("%s has no command %q", app.Name, name)
	}
	flags := flagNames(cmd.Flags)
	for _, w := range args[i+1:] {
		if w == "--" && cmd.Name == "slurm" {
			// 'simulate slurm --check ... -- CHECK-FLAGS': check's flags
			flags = flagNames(app.Command("check").Flags)
			continue
		}
		name := flagWord(w)
		if name == "" || name == "help" || name == "h" {
			continue
		}
		if _, ok := flags[name]; !ok {
			return fmt.Errorf("'%s %s' has no flag --%s", app.Name, cmd.Name, name)
		}
	}
	return nil
}

// goTestFlags are the go test flags the docs may use, and whether each
// takes a value.
var goTestFlags = map[string]bool{
	"run": true, "bench": true, "fuzz": true, "benchtime": true, "count": true, "timeout": true, "cpu": true,
	"fuzztime": true, "skip": true, "parallel": true, "tags": true, "v": false, "short": false, "race": false,
	"benchmem": false, "failfast": false, "json": false, "cover": false,
}

// importedFlags are test flags that an imported package defines.
var importedFlags = map[string][]string{"gonum.org/v1/plot/cmpimg": {"regen"}}

func (r *repo) checkGoTest(args []string) error {
	var pkgs []string
	pats := map[string]string{}
	var custom []string
	for i := 0; i < len(args); i++ {
		w := args[i]
		if !strings.HasPrefix(w, "-") {
			if strings.HasPrefix(w, "./") {
				pkgs = append(pkgs, w)
			}
			continue
		}
		name, val, hasVal := strings.Cut(strings.TrimLeft(w, "-"), "=")
		takes, std := goTestFlags[name]
		if !std {
			custom = append(custom, name)
			continue
		}
		if takes && !hasVal && i+1 < len(args) {
			i++
			val = args[i]
		}
		if name == "run" || name == "bench" || name == "fuzz" {
			pats[name] = val
		}
	}
	if len(pkgs) == 0 {
		return fmt.Errorf("no package (./PKG) named")
	}
	for _, p := range pkgs {
		if p == "./..." {
			if len(pats) > 0 || len(custom) > 0 {
				return fmt.Errorf("./... with -run, -bench, -fuzz or a test flag: name the package")
			}
			continue
		}
		dir := filepath.Join(r.root, strings.TrimSuffix(strings.TrimPrefix(p, "./"), "/..."))
		tests, err := r.testsOf(dir)
		if err != nil {
			return fmt.Errorf("package %s: %v", p, err)
		}
		match := func(pat, prefix string) (int, error) {
			top, _, _ := strings.Cut(pat, "/")
			re, err := regexp.Compile(top)
			if err != nil {
				return 0, fmt.Errorf("pattern %q: %v", pat, err)
			}
			n := 0
			for _, f := range tests.funcs {
				if strings.HasPrefix(f, prefix) && re.MatchString(f) {
					n++
				}
			}
			return n, nil
		}
		for _, k := range []struct{ flag, prefix string }{{"bench", "Benchmark"}, {"fuzz", "Fuzz"}} {
			if pat, ok := pats[k.flag]; ok {
				n, err := match(pat, k.prefix)
				if err != nil {
					return err
				}
				if n == 0 || k.flag == "fuzz" && n != 1 {
					return fmt.Errorf("-%s %s matches %d %s functions in %s", k.flag, pat, n, k.prefix, p)
				}
			}
		}
		if pat, ok := pats["run"]; ok {
			n := 0
			for _, prefix := range []string{"Test", "Fuzz", "Example"} {
				m, err := match(pat, prefix)
				if err != nil {
					return err
				}
				n += m
			}
			_, bench := pats["bench"]
			_, fuzz := pats["fuzz"]
			if n == 0 && !bench && !fuzz {
				return fmt.Errorf("-run %s matches no test in %s: the command runs nothing", pat, p)
			}
		}
		for _, f := range custom {
			if !tests.flags[f] {
				return fmt.Errorf("the tests of %s define no flag -%s", p, f)
			}
		}
	}
	return nil
}

// testsOf parses the test files of dir: its Test, Benchmark, Fuzz and
// Example functions, and the flags they define (flag.Bool("name", ...) and
// the like, and those of importedFlags).
func (r *repo) testsOf(dir string) (*pkgTests, error) {
	if t, ok := r.tests[dir]; ok {
		return t, t.err
	}
	t := &pkgTests{flags: map[string]bool{}}
	r.tests[dir] = t
	names, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
	if err != nil || len(names) == 0 {
		t.err = fmt.Errorf("no such package, or it has no tests (%s)", rel(r.root, dir))
		return t, t.err
	}
	fset := token.NewFileSet()
	for _, name := range names {
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.err = err
			return t, err
		}
		for _, im := range f.Imports {
			path, _ := strconv.Unquote(im.Path.Value)
			for _, fl := range importedFlags[path] {
				t.flags[fl] = true
			}
		}
		for _, decl := range f.Decls {
			if fd, ok := decl.(*ast.FuncDecl); ok && fd.Recv == nil {
				t.funcs = append(t.funcs, fd.Name.Name)
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if x, ok := sel.X.(*ast.Ident); !ok || x.Name != "flag" {
				return true
			}
			i := 0
			if strings.HasSuffix(sel.Sel.Name, "Var") {
				i = 1
			}
			if i < len(call.Args) {
				if lit, ok := call.Args[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
					s, _ := strconv.Unquote(lit.Value)
					t.flags[s] = true
				}
			}
			return true
		})
	}
	return t, nil
}

func (r *repo) checkPython(args []string) error {
	script := filepath.Join(r.root, args[0])
	raw, err := os.ReadFile(script)
	if err != nil {
		return err
	}
	for _, w := range args[1:] {
		if name := flagWord(w); name != "" && !bytes.Contains(raw, []byte(`"--`+name+`"`)) {
			return fmt.Errorf("%s defines no flag --%s", args[0], name)
		}
	}
	return nil
}

// pathRef is a repository path a document mentions; base is the directory
// a link is relative to ("" for paths relative to the repository root).
type pathRef struct {
	line       int
	text, base string
}

var (
	// identRE matches a qualified Go identifier such as sim.NewRand.
	identRE = regexp.MustCompile(`\b([a-z][a-z0-9]*)\.([A-Z][A-Za-z0-9_]*)`)
	// packageRE matches "package `x/y`".
	packageRE = regexp.MustCompile("[Pp]ackages? `([a-z][a-z0-9_/]*)`")
)

// pkgDir returns the directory of the module's package called name (the
// last element of its path), if there is exactly one.
func (r *repo) pkgDir(name string) (string, bool) {
	if r.pkgs == nil {
		r.pkgs = map[string][]string{}
		filepath.WalkDir(r.root, func(path string, e os.DirEntry, err error) error {
			if err != nil || !e.IsDir() {
				return nil
			}
			if n := e.Name(); path != r.root && (strings.HasPrefix(n, ".") || n == "testdata" || n == "examples" || r.generated(path)) {
				return filepath.SkipDir
			}
			if m, _ := filepath.Glob(filepath.Join(path, "*.go")); len(m) > 0 && !strings.Contains(path, string(filepath.Separator)+"cmd"+string(filepath.Separator)) {
				r.pkgs[filepath.Base(path)] = append(r.pkgs[filepath.Base(path)], path)
			}
			return nil
		})
	}
	d := r.pkgs[name]
	if len(d) != 1 {
		return "", false
	}
	return d[0], true
}

// isPackage reports whether path (relative to the root) is a directory
// holding Go files, or a Python package.
func (r *repo) isPackage(path string) bool {
	dir := filepath.Join(r.root, path)
	m, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	p, _ := filepath.Glob(filepath.Join(dir, "*", "__init__.py"))
	return len(m) > 0 || len(p) > 0
}

// declares reports whether the Go package in dir declares the top-level
// name (a type, function, variable or constant; test files excluded).
func (r *repo) declares(dir, name string) bool {
	if r.decls == nil {
		r.decls = map[string]map[string]bool{}
	}
	ds, ok := r.decls[dir]
	if !ok {
		ds = map[string]bool{}
		r.decls[dir] = ds
		names, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		fset := token.NewFileSet()
		for _, n := range names {
			if strings.HasSuffix(n, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, n, nil, parser.SkipObjectResolution)
			if err != nil {
				continue
			}
			for _, decl := range f.Decls {
				switch d := decl.(type) {
				case *ast.FuncDecl:
					if d.Recv == nil {
						ds[d.Name.Name] = true
					}
				case *ast.GenDecl:
					for _, sp := range d.Specs {
						switch sp := sp.(type) {
						case *ast.TypeSpec:
							ds[sp.Name.Name] = true
						case *ast.ValueSpec:
							for _, id := range sp.Names {
								ds[id.Name] = true
							}
						}
					}
				}
			}
		}
	}
	return ds[name]
}

var quotedRE = regexp.MustCompile(`"[^"]*"`)

var pathWordRE = regexp.MustCompile(`^\.?/?[A-Za-z0-9_.{}*,-]+(/[A-Za-z0-9_.{}*,-]*)+$`)

// paths returns the repository paths in the document's inline code and
// shell blocks (words whose first element is a top-level entry of the
// repository) and its relative link targets.
func (d *doc) paths(r *repo) []pathRef {
	var out []pathRef
	add := func(line int, text string) {
		for _, w := range strings.FieldsFunc(text, func(c rune) bool { return unicode.IsSpace(c) || strings.ContainsRune("()[];:'\"=`", c) }) {
			w = strings.TrimPrefix(strings.TrimRight(w, ".,"), "./")
			if !pathWordRE.MatchString(w) {
				continue
			}
			first, _, _ := strings.Cut(w, "/")
			if r.topLevel[first] {
				out = append(out, pathRef{line: line, text: w})
			}
		}
	}
	for _, p := range d.paras {
		for _, m := range inlineRE.FindAllStringSubmatch(p.text, -1) {
			// a quoted string in code is a name ("smc/run"), not a path
			add(p.line, quotedRE.ReplaceAllString(m[1], " "))
		}
	}
	for _, b := range d.blocks {
		if isShell(b.lang) {
			for _, l := range b.logicalLines() {
				add(b.line+l.index, l.text)
			}
		}
	}
	for _, l := range d.links {
		if strings.Contains(l.target, "://") || strings.HasPrefix(l.target, "#") || strings.HasPrefix(l.target, "mailto:") {
			continue
		}
		file, _, _ := strings.Cut(l.target, "#")
		out = append(out, pathRef{line: l.line, text: file, base: filepath.Dir(d.path)})
	}
	return out
}

// checkPath checks that a path exists, expanding {a,b} and globs. A path
// under a name that a .gitignore on its way ignores is an output and is
// not checked.
func (r *repo) checkPath(p, base string) error {
	if base == "" {
		base = r.root
	}
	for _, q := range expandBraces(p) {
		full := filepath.Join(base, filepath.FromSlash(q))
		if m, _ := filepath.Glob(full); len(m) > 0 {
			continue
		}
		if r.generated(full) {
			continue
		}
		return fmt.Errorf("%s does not exist", q)
	}
	return nil
}

// generated reports whether full lies under a name that the .gitignore of
// a directory on its way ignores.
func (r *repo) generated(full string) bool {
	relp, err := filepath.Rel(r.root, full)
	if err != nil {
		return false
	}
	dir := r.root
	for _, c := range strings.Split(relp, string(filepath.Separator)) {
		if gitignored(dir)[c] {
			return true
		}
		dir = filepath.Join(dir, c)
	}
	return false
}

func expandBraces(p string) []string {
	i := strings.Index(p, "{")
	j := strings.Index(p, "}")
	if i < 0 || j < i {
		return []string{p}
	}
	var out []string
	for _, alt := range strings.Split(p[i+1:j], ",") {
		out = append(out, expandBraces(p[:i]+alt+p[j+1:])...)
	}
	return out
}

// runExamples runs the shell blocks of the README's "Three examples"
// section in a temporary directory, in order, in-process: each command
// must exit with the status its '# exit status N' comment gives (0
// otherwise), and each line of the text block that follows a shell block
// must appear, in order, in what the block's commands printed.
func runExamples(t *testing.T, r *repo, readme *doc) {
	tmp := t.TempDir()
	t.Chdir(tmp)
	var last string // output of the last shell block
	n := 0
	for _, b := range readme.blocks {
		if b.section != "Three examples" {
			continue
		}
		switch {
		case isShell(b.lang):
			var out bytes.Buffer
			for _, l := range b.logicalLines() {
				for _, c := range splitCommands(l.text, b.line+l.index) {
					prog, i := program(c.words)
					if prog != "simulate" && prog != "report" {
						t.Fatalf("README.md:%d: the examples run simulate and report only, not %q", c.line, c.words[0])
					}
					args := []string{prog}
					for _, w := range c.words[i:] {
						// repository files are read where they are; outputs go to tmp
						if _, err := os.Stat(filepath.Join(r.root, w)); err == nil && strings.Contains(w, "/") && !filepath.IsAbs(w) {
							w = filepath.Join(r.root, w)
						}
						args = append(args, w)
					}
					var stdout, stderr bytes.Buffer
					var code int
					if prog == "simulate" {
						code = simcli.Run(&stdout, &stderr, args)
					} else {
						code = run(&stdout, &stderr, args)
					}
					n++
					if code != c.exit {
						t.Errorf("README.md:%d: %s: exit %d, the README shows %d\nstderr:\n%s", c.line, strings.Join(c.words, " "), code, c.exit, stderr.String())
					}
					out.Write(stdout.Bytes())
					out.Write(stderr.Bytes())
				}
			}
			last = out.String()
		case b.lang == "text":
			if err := contains(last, b.lines); err != nil {
				t.Errorf("README.md:%d: the output shown differs from the command's: %v\noutput:\n%s", b.line, err, last)
			}
		}
	}
	if n < 4 {
		t.Errorf("ran only %d example commands; the README's section \"Three examples\" has lost them", n)
	}
}

// contains checks that every non-empty shown line matches a line of out,
// in order; '…' in a shown line matches any text.
func contains(out string, shown []string) error {
	lines := strings.Split(out, "\n")
	k := 0
	for _, s := range shown {
		if strings.TrimSpace(s) == "" {
			continue
		}
		parts := strings.Split(s, "…")
		for i, p := range parts {
			parts[i] = regexp.QuoteMeta(p)
		}
		re := regexp.MustCompile("^" + strings.Join(parts, ".*") + "$")
		for k < len(lines) && !re.MatchString(lines[k]) {
			k++
		}
		if k == len(lines) {
			return fmt.Errorf("no line (after the previous one matched) is %q", s)
		}
		k++
	}
	return nil
}

func rel(root, path string) string {
	r, err := filepath.Rel(root, path)
	if err != nil {
		return path
	}
	return filepath.ToSlash(r)
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

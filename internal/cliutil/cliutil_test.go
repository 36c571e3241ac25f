package cliutil

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/specsim/specsim/internal/diag"
	"github.com/specsim/specsim/sim"
	"github.com/urfave/cli/v2"
)

func TestInterspersed(t *testing.T) {
	app := &cli.App{Name: "x", Flags: []cli.Flag{&cli.Float64Flag{Name: "mem-budget"}, &cli.BoolFlag{Name: "quiet"}},
		Commands: []*cli.Command{{Name: "run", Flags: []cli.Flag{
			&cli.BoolFlag{Name: "json"}, &cli.StringFlag{Name: "out"}}}}}
	for _, c := range []struct{ in, want []string }{
		{[]string{"x", "run", "NAME", "--json", "--out", "D"}, []string{"x", "run", "--json", "--out", "D", "NAME"}},
		{[]string{"x", "run", "--out=D", "NAME", "--json"}, []string{"x", "run", "--out=D", "--json", "NAME"}},
		{[]string{"x", "run", "NAME", "--", "--json"}, []string{"x", "run", "NAME", "--", "--json"}},
		{[]string{"x", "other", "a", "--b"}, []string{"x", "other", "a", "--b"}},
		// global flags before the command (issue 23): the command's
		// flags after its positional argument are still read
		{[]string{"x", "--mem-budget", "1", "run", "NAME", "--json", "--out", "D"}, []string{"x", "--mem-budget", "1", "run", "--json", "--out", "D", "NAME"}},
		{[]string{"x", "--mem-budget=1", "--quiet", "run", "NAME", "--out", "D"}, []string{"x", "--mem-budget=1", "--quiet", "run", "--out", "D", "NAME"}},
		{[]string{"x", "--mem-budget", "1"}, []string{"x", "--mem-budget", "1"}},
	} {
		if got := Interspersed(app, c.in); !reflect.DeepEqual(got, c.want) {
			t.Errorf("Interspersed(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestWriteJSONNonFinite(t *testing.T) {
	var b bytes.Buffer
	v := struct {
		A float64 `json:"a"`
		B float64 `json:"b,omitempty"`
		C []float64
		D struct {
			E float64 `json:"e"`
		} `json:"d"`
	}{A: math.Inf(1), C: []float64{math.NaN(), 1}}
	v.D.E = math.Inf(-1)
	if err := WriteJSON(&b, v); err != nil {
		t.Fatal(err)
	}
	want := `{"a":null,"C":[null,1],"d":{"e":null}}`
	if got := strings.Join(strings.Fields(b.String()), ""); got != want {
		t.Errorf("WriteJSON = %s, want %s", got, want)
	}
}

func TestCodeOf(t *testing.T) {
	for _, c := range []struct {
		err  error
		code int
	}{
		{diag.Usage(errors.New("x")), diag.ExitUsage}, {diag.IO(errors.New("x")), diag.ExitIO}, {diag.Violated(errors.New("x")), diag.ExitViolated},
		{diag.Interrupted(errors.New("x")), diag.ExitInterrupted}, {errors.New("flag provided but not defined: -z"), diag.ExitUsage},
		{errors.New("boom"), diag.ExitError},
		{diag.Inconclusive(errors.New("x")), diag.ExitInconclusive},
		{fmt.Errorf("source: %w", sim.ErrBadDist), diag.ExitUsage}, {fmt.Errorf("pool: %w", sim.ErrMemBudget), diag.ExitUsage},
		{fmt.Errorf("log: %w", diag.New(diag.ErrIO, "unreadable log")), diag.ExitIO},
		{fmt.Errorf("run: %w", context.Canceled), diag.ExitInterrupted}, {diag.IO(context.Canceled), diag.ExitIO},
	} {
		if got := CodeOf(c.err); got != c.code {
			t.Errorf("CodeOf(%v) = %d, want %d", c.err, got, c.code)
		}
	}
}

// A panic in an Action is an internal error: exit 1, one line on stderr
// naming a file that holds the stack, nothing on stdout.
func TestRunCrash(t *testing.T) {
	var out, errb bytes.Buffer
	app := &cli.App{Name: "x", Writer: &out, ErrWriter: &errb, Commands: []*cli.Command{{Name: "boom",
		Action: func(*cli.Context) error { var m map[string]int; m["a"] = 1; return nil }}}}
	if code := Run(app, &errb, []string{"x", "boom"}); code != diag.ExitError {
		t.Fatalf("exit %d, want %d", code, diag.ExitError)
	}
	lines := strings.Split(strings.TrimSpace(errb.String()), "\n")
	if len(lines) != 1 || !strings.Contains(lines[0], "internal error") || out.Len() != 0 {
		t.Fatalf("stderr %q, stdout %q", errb.String(), out.String())
	}
	i := strings.Index(lines[0], "details in ")
	if i < 0 {
		t.Fatalf("no file named: %q", lines[0])
	}
	path := strings.TrimSpace(strings.SplitN(lines[0][i+len("details in "):], ";", 2)[0])
	b, err := os.ReadFile(path)
	os.Remove(path)
	if err != nil || !strings.Contains(string(b), "assignment to entry in nil map") || !strings.Contains(string(b), "goroutine") {
		t.Fatalf("crash file %s: %v %q", path, err, b)
	}
}

// Flag errors, a missing required flag and an unknown command are one
// line on stderr with a pointer to --help, exit 2, nothing on stdout.
func TestRunUsageOneLine(t *testing.T) {
	for _, args := range [][]string{{"x", "run", "--bogus", "--json"}, {"x", "run", "--n", "abc"}, {"x", "run"}, {"x", "nope"}} {
		var out, errb bytes.Buffer
		app := &cli.App{Name: "x", Writer: &out, ErrWriter: &errb, Commands: []*cli.Command{{Name: "run", Flags: []cli.Flag{
			&cli.BoolFlag{Name: "json"}, &cli.IntFlag{Name: "n"}, &cli.StringFlag{Name: "out", Required: true}},
			Action: func(*cli.Context) error { return nil }}}}
		code := Run(app, &errb, args)
		lines := strings.Split(strings.TrimSpace(errb.String()), "\n")
		if code != diag.ExitUsage || len(lines) != 1 || !strings.Contains(lines[0], "--help") || out.Len() != 0 {
			t.Errorf("%q: exit %d, stderr %q, stdout %q", args, code, errb.String(), out.String())
		}
	}
}

// A library error naming a field that is one of the command's flags (or
// the app's) shows the flag, one dash for one letter; a field that is no
// flag keeps its name; the kind, and so the exit code, stays.
func TestRunFlagNames(t *testing.T) {
	for _, c := range []struct {
		err  error
		code int
		want string
	}{
		{diag.Param("workers", " = %d; use 0 (all cores) or more", -1), diag.ExitUsage, "x: --workers = -1; use 0 (all cores) or more"},
		{fmt.Errorf("scenario: %w", diag.Param("k", " = 0; use 1 or more")), diag.ExitUsage, "x: scenario: -k = 0; use 1 or more"},
		{diag.IO(fmt.Errorf("cell 3: %w", diag.Param("mem", " = 0"))), diag.ExitIO, "x: cell 3: --mem = 0"},
		{diag.Param("the spec's scale", " = 0; use a positive factor"), diag.ExitUsage, "x: the spec's scale = 0; use a positive factor"},
		{diag.Param("seed", ": bad"), diag.ExitUsage, "x: seed: bad"},
	} {
		var out, errb bytes.Buffer
		app := &cli.App{Name: "x", Writer: &out, ErrWriter: &errb, Flags: []cli.Flag{&cli.IntFlag{Name: "mem"}},
			Commands: []*cli.Command{{Name: "run", Flags: []cli.Flag{&cli.IntFlag{Name: "workers"}, &cli.IntFlag{Name: "k"}},
				Action: func(*cli.Context) error { return c.err }}}}
		code := Run(app, &errb, []string{"x", "run"})
		if code != c.code || errb.String() != c.want+"\n" {
			t.Errorf("%v: exit %d, stderr %q; want exit %d, %q", c.err, code, errb.String(), c.code, c.want)
		}
	}
}

// clearRequired clears Required on every flag type of urfave/cli v2 (the
// front ends turn a missing required flag into their own one-line usage
// error) and leaves a flag without the field alone.
func TestClearRequired(t *testing.T) {
	for _, f := range []cli.Flag{&cli.StringFlag{Required: true}, &cli.IntFlag{Required: true}, &cli.Int64Flag{Required: true},
		&cli.Uint64Flag{Required: true}, &cli.Float64Flag{Required: true}, &cli.BoolFlag{Required: true},
		&cli.StringSliceFlag{Required: true}, &cli.DurationFlag{Required: true}, &cli.PathFlag{Required: true},
		&cli.Float64SliceFlag{Required: true}, &cli.TimestampFlag{Required: true}, &cli.GenericFlag{Required: true}} {
		if !clearRequired(f) || f.(cli.RequiredFlag).IsRequired() {
			t.Errorf("%T: Required not cleared", f)
		}
	}
	if clearRequired(noRequired{}) {
		t.Error("a flag without a Required field was reported cleared")
	}
}

type noRequired struct{ cli.Flag }

// OneArg names the command and what it needs when there is not exactly
// one positional argument.
func TestOneArg(t *testing.T) {
	for _, c := range []struct {
		args    []string
		got     string
		wantErr string
	}{{[]string{"x", "merge", "D"}, "D", ""}, {[]string{"x", "merge"}, "", "x: merge needs one directory\n"},
		{[]string{"x", "merge", "D", "E"}, "", "x: merge needs one directory\n"}} {
		var got string
		var errb bytes.Buffer
		app := &cli.App{Name: "x", Commands: []*cli.Command{{Name: "merge", Action: func(ctx *cli.Context) (err error) {
			got, err = OneArg(ctx, "directory")
			return err
		}}}}
		code := Run(app, &errb, c.args)
		if got != c.got || errb.String() != c.wantErr || (c.wantErr != "") != (code == diag.ExitUsage) {
			t.Errorf("%q: got %q, exit %d, stderr %q", c.args, got, code, errb.String())
		}
	}
}

// An error quoting input (an external implementation's message or name)
// reaches stderr as one line with its control characters shown, not
// acted on: no ESC, BEL or carriage return gets to the terminal.
func TestRunEscapesErrorLine(t *testing.T) {
	var out, errb bytes.Buffer
	app := &cli.App{Name: "x", Writer: &out, ErrWriter: &errb, Commands: []*cli.Command{{Name: "run",
		Action: func(*cli.Context) error {
			return fmt.Errorf("external: evil\x1b]0;title\x07: the implementation reported an error: \x1b[2J\rgone\u202e")
		}}}}
	Run(app, &errb, []string{"x", "run"})
	got := errb.String()
	if strings.ContainsAny(got, "\x1b\x07\r\u202e") || !strings.Contains(got, `\x1b[2J\x0dgone\u202e`) || strings.Count(got, "\n") != 1 {
		t.Errorf("stderr %q", got)
	}
}

package diag

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// The table: each kind's exit code, never renumbered.
func TestKindCodes(t *testing.T) {
	want := map[*Kind]int{ErrUsage: 2, ErrViolated: 3, ErrInterrupted: 4, ErrIO: 5, ErrInconclusive: 6, ErrContract: 7}
	if len(Kinds) != len(want) {
		t.Fatalf("%d kinds, want %d", len(Kinds), len(want))
	}
	for _, k := range Kinds {
		if k.Code() != want[k] {
			t.Errorf("%v: code %d, want %d", k, k.Code(), want[k])
		}
	}
	if ExitOK != 0 || ExitError != 1 {
		t.Errorf("ExitOK = %d, ExitError = %d", ExitOK, ExitError)
	}
}

// A kind keeps the message, survives wrapping with %w, and the outermost
// kind wins; nil stays nil.
func TestKinds(t *testing.T) {
	base := errors.New("cell 3: disk full")
	e := fmt.Errorf("experiment x: %w", IO(base))
	if !errors.Is(e, ErrIO) || errors.Is(e, ErrUsage) || !errors.Is(e, base) {
		t.Errorf("errors.Is on %v", e)
	}
	if e.Error() != "experiment x: cell 3: disk full" {
		t.Errorf("message %q", e.Error())
	}
	if KindOf(e) != ErrIO || KindOf(base) != nil {
		t.Errorf("KindOf = %v, %v", KindOf(e), KindOf(base))
	}
	if k := KindOf(Interrupted(Usage(base))); k != ErrInterrupted {
		t.Errorf("outer kind %v, want interrupted", k)
	}
	for _, m := range []func(error) error{Usage, IO, Violated, Inconclusive, Interrupted, Contract} {
		if m(nil) != nil {
			t.Error("marking nil gave an error")
		}
	}
	if !errors.Is(Violated(base), ErrViolated) || !errors.Is(Inconclusive(base), ErrInconclusive) || !errors.Is(Contract(base), ErrContract) {
		t.Error("Violated, Inconclusive, Contract")
	}
}

// A sentinel made by New matches itself and its kind through wrapping,
// and another kind marked outside it wins.
func TestNew(t *testing.T) {
	errInvalid := New(ErrUsage, "invalid log")
	errCorrupt := New(ErrIO, "unreadable log")
	e := fmt.Errorf("%w: row 3: bad shape", errInvalid)
	if !errors.Is(e, errInvalid) || errors.Is(e, errCorrupt) || !errors.Is(e, ErrUsage) || errors.Is(e, ErrIO) {
		t.Errorf("errors.Is on %v", e)
	}
	if e.Error() != "invalid log: row 3: bad shape" || KindOf(e) != ErrUsage {
		t.Errorf("message %q, kind %v", e.Error(), KindOf(e))
	}
	if KindOf(Interrupted(e)) != ErrInterrupted || KindOf(fmt.Errorf("x: %w", errCorrupt)) != ErrIO {
		t.Error("outermost kind")
	}
}

// Param names the field; Rename shows the flag in its place, inside any
// wrapping, keeping the chain; names show does not know stay.
func TestParamRename(t *testing.T) {
	base := errors.New(`no experiment "x"`)
	p := Param("only", ": %w", base)
	w := Param("workers", " = %d; use 0 (all cores) or more", -1)
	if w.Error() != "workers = -1; use 0 (all cores) or more" || !errors.Is(w, ErrUsage) || KindOf(w) != ErrUsage {
		t.Fatalf("Param: %q, kind %v", w.Error(), KindOf(w))
	}
	if !errors.Is(p, base) || p.Error() != `only: no experiment "x"` {
		t.Fatalf("Param wrapping: %q", p.Error())
	}
	flags := func(name string) (string, bool) {
		switch name {
		case "workers", "only":
			return "--" + name, true
		case "k":
			return "-k", true
		}
		return "", false
	}
	e := Interrupted(fmt.Errorf("reproduce: %w", errors.Join(w, p, Param("the spec's scale", " = %g; use a positive factor", -2.0), Param("k", " = %d; use 1 or more", 0))))
	r := Rename(e, flags)
	want := "reproduce: --workers = -1; use 0 (all cores) or more\n--only: no experiment \"x\"\nthe spec's scale = -2; use a positive factor\n-k = 0; use 1 or more"
	if r.Error() != want {
		t.Fatalf("Rename:\n%s\nwant\n%s", r.Error(), want)
	}
	if again := Rename(r, flags); again.Error() != want {
		t.Errorf("Rename twice:\n%s", again.Error())
	}
	var pe *ParamError
	if KindOf(r) != ErrInterrupted || !errors.Is(r, base) || !errors.As(r, &pe) || pe.Name != "workers" {
		t.Errorf("Rename lost the chain: kind %v", KindOf(r))
	}
	trials := errors.New("trials = 0; use 1 to 10 trials")
	if e := ParamOf("trials", trials); e.Error() != "trials = 0; use 1 to 10 trials" || !errors.Is(e, trials) || !errors.Is(e, ErrUsage) ||
		Rename(e, func(string) (string, bool) { return "--trials", true }).Error() != "--trials = 0; use 1 to 10 trials" {
		t.Errorf("ParamOf: %q", e)
	}
	if e := ParamOf("seed", trials); e.Error() != "seed: trials = 0; use 1 to 10 trials" || ParamOf("x", nil) != nil {
		t.Errorf("ParamOf of another name: %q", e)
	}
	if plain := errors.New("x"); Rename(plain, flags) != plain || Rename(nil, flags) != nil {
		t.Error("Rename changed an error with no ParamError")
	}
	if n := strings.Count(Rename(Param("scale", " = 0"), flags).Error(), "--"); n != 0 {
		t.Error("Rename renamed a name show does not know")
	}
}

// Warnings encode as a list of messages, [] for none, and decode back;
// omitempty leaves out an empty list.
func TestWarningsJSON(t *testing.T) {
	type R struct {
		W Warnings `json:"warnings"`
		O Warnings `json:"notes,omitempty"`
	}
	for _, c := range []struct {
		r    R
		want string
	}{
		{R{}, `{"warnings":[]}`},
		{R{W: Warnings{errors.New("df = 0"), fmt.Errorf("%w: 3 observations", errors.New("impossible"))}, O: Warnings{errors.New("n")}},
			`{"warnings":["df = 0","impossible: 3 observations"],"notes":["n"]}`},
	} {
		b, err := json.Marshal(c.r)
		if err != nil || string(b) != c.want {
			t.Fatalf("Marshal = %s, %v; want %s", b, err, c.want)
		}
		var back R
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		if strings.Join(back.W.Strings(), "|") != strings.Join(c.r.W.Strings(), "|") || len(back.O) != len(c.r.O) {
			t.Errorf("round trip of %s: %q", b, back.W.Strings())
		}
	}
	var sb strings.Builder
	Warnings{errors.New("a"), errors.New("b")}.Print(&sb, "simulate")
	if sb.String() != "simulate: warning: a\nsimulate: warning: b\n" {
		t.Errorf("Print: %q", sb.String())
	}
}

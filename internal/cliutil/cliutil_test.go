package cliutil

import (
	"bytes"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

func TestInterspersed(t *testing.T) {
	app := &cli.App{Name: "x", Commands: []*cli.Command{{Name: "run", Flags: []cli.Flag{
		&cli.BoolFlag{Name: "json"}, &cli.StringFlag{Name: "out"}}}}}
	for _, c := range []struct{ in, want []string }{
		{[]string{"x", "run", "NAME", "--json", "--out", "D"}, []string{"x", "run", "--json", "--out", "D", "NAME"}},
		{[]string{"x", "run", "--out=D", "NAME", "--json"}, []string{"x", "run", "--out=D", "--json", "NAME"}},
		{[]string{"x", "run", "NAME", "--", "--json"}, []string{"x", "run", "NAME", "--", "--json"}},
		{[]string{"x", "other", "a", "--b"}, []string{"x", "other", "a", "--b"}},
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
	want := `{"a":"+Inf","C":["NaN",1],"d":{"e":"-Inf"}}`
	if got := strings.Join(strings.Fields(b.String()), ""); got != want {
		t.Errorf("WriteJSON = %s, want %s", got, want)
	}
}

func TestCodeOf(t *testing.T) {
	for _, c := range []struct {
		err  error
		code int
	}{
		{Usage(errors.New("x")), ExitUsage}, {IO(errors.New("x")), ExitIO}, {Violated(errors.New("x")), ExitViolated},
		{Interrupted(errors.New("x")), ExitInterrupted}, {errors.New("flag provided but not defined: -z"), ExitUsage},
		{errors.New("boom"), ExitError},
	} {
		if got := CodeOf(c.err); got != c.code {
			t.Errorf("CodeOf(%v) = %d, want %d", c.err, got, c.code)
		}
	}
}

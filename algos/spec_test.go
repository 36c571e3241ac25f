package algos

import (
	"strings"
	"testing"
)

// ParseSpec and ParseParams: the one syntax of rule parameters, with the
// error naming the pair for every malformed neighbour (no key, no value,
// a key twice, NaN, Inf, a zero denominator, not a number).
func TestParseSpec(t *testing.T) {
	t.Parallel()
	name, ps, err := ParseSpec(" lenience : l = 1/4 , x=2e-1")
	if err != nil || name != "lenience" || len(ps) != 2 || ps["l"] != 0.25 || ps["x"] != 0.2 {
		t.Errorf("ParseSpec = %q, %v, %v", name, ps, err)
	}
	if name, ps, err := ParseSpec("token"); err != nil || name != "token" || ps != nil {
		t.Errorf("ParseSpec(token) = %q, %v, %v", name, ps, err)
	}
	if name, ps, err := ParseSpec("token:"); err != nil || name != "token" || ps != nil {
		t.Errorf("ParseSpec(token:) = %q, %v, %v", name, ps, err)
	}
	for spec, want := range map[string]string{
		":l=1":            "names no rule",
		"  ":              "names no rule",
		"r:l":             `"l" is not key=value`,
		"r:=1":            `"=1" is not key=value`,
		"r:l=":            `"l=" is not key=value`,
		"r:l=1,l=2":       "l given twice",
		"r:l=NaN":         `l="NaN" is not a finite number`,
		"r:l=-Inf":        `l="-Inf" is not a finite number`,
		"r:l=1/0":         `l="1/0" is not a finite number`,
		"r:l=one":         `l="one" is not a finite number`,
		"r:l=1e400":       `l="1e400" is not a finite number`,
		"r:l=0.1,,x=2":    `"" is not key=value`,
		"r:l=0.1,x=2,l=3": "l given twice",
	} {
		if _, _, err := ParseSpec(spec); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseSpec(%q) = %v, want an error saying %s", spec, err, want)
		}
	}
}

package algos

import (
	"fmt"
	"math"
	"strings"

	"github.com/specsim/specsim/sim"
)

// ParseParams reads rule parameters written key=value, each value a
// finite number or a fraction a/b, as --param, --conform NAME:k=v and a
// sweep's algo axis write them. It is the one parser of rule parameters;
// the error names the pair and says what it should be, for the caller to
// prefix with where the pair came from (a flag, an axis). It checks the
// syntax only: whether the rule takes the keys is the rule's Build's.
func ParseParams(kvs []string) (Params, error) {
	ps := Params{}
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok || k == "" || v == "" {
			return nil, fmt.Errorf("%q is not key=value (for example D=0.1)", kv)
		}
		if _, dup := ps[k]; dup {
			return nil, fmt.Errorf("%s given twice", k)
		}
		f, err := sim.ParseNumber(v)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, fmt.Errorf("%s=%q is not a finite number", k, v)
		}
		ps[k] = f
	}
	return ps, nil
}

// ParseSpec splits a rule spec "NAME" or "NAME:k=v,k=v" into the rule's
// name and the parameters it gives (nil when it gives none), with
// ParseParams's syntax. The name is not looked up.
func ParseSpec(spec string) (string, Params, error) {
	name, rest, hasParams := strings.Cut(strings.TrimSpace(spec), ":")
	name = strings.TrimSpace(name)
	if name == "" {
		return "", nil, fmt.Errorf("%q names no rule; write NAME or NAME:k=v,...", spec)
	}
	if !hasParams || strings.TrimSpace(rest) == "" {
		return name, nil, nil
	}
	ps, err := ParseParams(strings.Split(rest, ","))
	return name, ps, err
}

package source_test

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/specsim/specsim/sim"
	"github.com/specsim/specsim/sim/source"
)

// TestKindsDocumentTheirKeys: every registered kind has a summary and
// documents every key; each key, given its documented default, is read
// (not reported unknown) and builds the same source as the spec without
// it; a key of another kind is refused with the kind's own key list
// (dirichlet:T=2 was accepted and ignored while one config carried every
// pool kind's fields).
func TestKindsDocumentTheirKeys(t *testing.T) {
	t.Parallel()
	if len(source.Kinds()) == 0 {
		t.Fatal("no source kinds registered")
	}
	for _, k := range source.All() {
		if k.Summary == "" || k.Parse == nil {
			t.Errorf("%s: no summary or parser", k.Name)
		}
		small := smallPrefix(k)
		plain, err := source.New(k.Name+":"+small+"seed=3", 2, 1, 0)
		if err != nil {
			t.Fatalf("%s: %v", k.Name, err)
		}
		for _, key := range k.Keys {
			if key.Doc == "" || key.Default == "" {
				t.Errorf("%s: key %s has no doc or default", k.Name, key.Name)
			}
			if key.Name == "V" && small != "" {
				continue
			}
			spec := k.Name + ":" + small + "seed=3," + key.Name + "=" + key.Default
			src, err := source.New(spec, 2, 1, 0)
			if err != nil {
				t.Errorf("%s: %v", spec, err)
				continue
			}
			if digest(src) != digest(plain) {
				t.Errorf("%s builds another source than its default", spec)
			}
		}
		err = source.Check(k.Name+":bogus=1", 2, 0)
		if err == nil || !strings.HasSuffix(err.Error(), "it takes "+k.KeyNames()) || !strings.HasSuffix(k.KeyNames(), ", seed") {
			t.Errorf("%s:bogus=1: %v, want the unknown-key error listing %s", k.Name, err, k.KeyNames())
		}
	}
	for _, spec := range []string{"dirichlet:T=2", "zipf:beta=0.5", "temperature:s=1", "markov:contexts=2"} {
		if err := source.Check(spec, 2, 0); err == nil || !strings.Contains(err.Error(), "unknown key") {
			t.Errorf("%s: %v, want unknown key", spec, err)
		}
	}
	if err := source.Check("dirichlet:T=2", 2, 0); err == nil || err.Error() != `source dirichlet: unknown key "T"; it takes V, a, beta, contexts, seed` {
		t.Errorf("dirichlet:T=2: %v", err)
	}
}

// smallPrefix is the spec prefix that keeps kind k's source small in a
// test: "V=40," where k has a V key whose default is larger and takes
// 40, else nothing (the kind's defaults).
func smallPrefix(k source.Kind) string {
	for _, key := range k.Keys {
		if key.Name == "V" && key.Default != "40" && source.Check(k.Name+":V=40", 2, 0) == nil {
			return "V=40,"
		}
	}
	return ""
}

// TestQualityKeys: a kind's draft-quality knob, where it has one, is one
// of its own keys, and turning it to another value changes the draft
// (the source built differs from the default's).
func TestQualityKeys(t *testing.T) {
	t.Parallel()
	quality := 0
	for _, k := range source.All() {
		if k.Quality == "" {
			continue
		}
		quality++
		var def string
		for _, key := range k.Keys {
			if key.Name == k.Quality {
				def = key.Default
			}
		}
		if def == "" {
			t.Errorf("%s: quality key %q is not one of its keys (%s)", k.Name, k.Quality, k.KeyNames())
			continue
		}
		small := smallPrefix(k)
		plain, err := source.New(k.Name+":"+small+"seed=3", 2, 1, 0)
		if err != nil {
			t.Fatalf("%s: %v", k.Name, err)
		}
		other := "0.5"
		if def == other {
			other = "0.25"
		}
		moved, err := source.New(k.Name+":"+small+"seed=3,"+k.Quality+"="+other, 2, 1, 0)
		if err != nil {
			t.Errorf("%s: %s=%s: %v", k.Name, k.Quality, other, err)
			continue
		}
		if digest(moved) == digest(plain) {
			t.Errorf("%s: %s=%s builds the same source as %s=%s", k.Name, k.Quality, other, k.Quality, def)
		}
	}
	if quality == 0 {
		t.Error("no source kind has a quality key (the sweeps' quality axis needs one)")
	}
}

// TestRegisterRefuses: Register panics on kinds that could not work and
// on a name taken, and leaves the registry as it was.
func TestRegisterRefuses(t *testing.T) {
	t.Parallel()
	before := len(source.Kinds())
	parse := func(*source.Args) (source.Config, error) { return nil, nil }
	for _, c := range []struct {
		what string
		k    source.Kind
	}{
		{"no name", source.Kind{Parse: parse}},
		{"colon in the name", source.Kind{Name: "a:b", Parse: parse}},
		{"no parser", source.Kind{Name: "test-noparse"}},
		{"a seed key", source.Kind{Name: "test-seed", Parse: parse, Keys: []source.Key{{Name: "seed"}}}},
		{"a key twice", source.Kind{Name: "test-twice", Parse: parse, Keys: []source.Key{{Name: "V"}, {Name: "V"}}}},
		{"an unknown quality key", source.Kind{Name: "test-quality", Parse: parse, Quality: "q"}},
		{"a name taken", source.Kind{Name: "zipf", Parse: parse}},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: Register did not panic", c.what)
				}
			}()
			source.Register(c.k)
		}()
	}
	if got := len(source.Kinds()); got != before {
		t.Errorf("%d kinds after refused registrations, want the %d before them", got, before)
	}
}

// TestCheckMatchesNew: Check refuses with New's error, memory included,
// and neither allocates the refused source.
func TestCheckMatchesNew(t *testing.T) {
	t.Parallel()
	for _, spec := range []string{"markov:V=99", "markov:V=4,order=1", "zipf:V=5000000", "temperature:T=-1", "dirichlet:V=4194304,contexts=65536"} {
		cerr := source.Check(spec, 2, 0)
		_, nerr := source.New(spec, 2, 1, 0)
		if (cerr == nil) != (nerr == nil) || (cerr != nil && cerr.Error() != nerr.Error()) {
			t.Errorf("%s: Check %v, New %v", spec, cerr, nerr)
		}
	}
	if err := source.Check("markov:V=4", 0, 0); err == nil || err.Error() != "source markov:V=4: gamma = 0; use 1 <= gamma <= 64" {
		t.Errorf("markov:V=4 at gamma 0: %v", err)
	}
	if err := source.Check("dirichlet:V=4194304,contexts=65536", 2, 0); !errors.Is(err, sim.ErrMemBudget) {
		t.Errorf("a 6 TiB pool: %v, want ErrMemBudget", err)
	}
}

// TestDirectConfig: a kind's config type builds without a spec, as the
// experiments use it, drawing the same pool as the spec with the same
// stream.
func TestDirectConfig(t *testing.T) {
	t.Parallel()
	c := source.Zipf{Shape: source.Shape{V: 64, Gamma: 2, Contexts: 3}, S: 1.1, SQ: 1.3}
	pl, err := c.Pool(sim.NewRand(9, sim.StreamID("source/zipf")))
	if err != nil {
		t.Fatal(err)
	}
	src, err := source.New("zipf:V=64,contexts=3,seed=9", 2, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	spl, _ := sim.PoolOf(src)
	if pl.Name != "" || spl.Name != "zipf:V=64,contexts=3,seed=9" || digest(sim.Source{BlockSource: pl}) != digest(src) {
		t.Errorf("direct config: name %q, spec's %q; the rows differ or are misnamed", pl.Name, spl.Name)
	}
	if _, err := (source.Zipf{Shape: source.Shape{V: 64, Gamma: 2, Contexts: 3}}).Pool(rand.New(rand.NewPCG(1, 2))); err == nil {
		t.Errorf("zero exponents accepted")
	}
}

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
	if got := strings.Join(source.Kinds(), ","); got != "dirichlet,markov,temperature,zipf" {
		t.Fatalf("kinds %s", got)
	}
	small := map[string]string{"dirichlet": "V=40,", "temperature": "V=40,", "zipf": "V=40,", "markov": ""}
	for _, k := range source.All() {
		if k.Summary == "" || k.Parse == nil {
			t.Errorf("%s: no summary or parser", k.Name)
		}
		plain, err := source.New(k.Name+":"+small[k.Name]+"seed=3", 2, 1, 0)
		if err != nil {
			t.Fatalf("%s: %v", k.Name, err)
		}
		for _, key := range k.Keys {
			if key.Doc == "" || key.Default == "" {
				t.Errorf("%s: key %s has no doc or default", k.Name, key.Name)
			}
			if key.Name == "V" && small[k.Name] != "" {
				continue
			}
			spec := k.Name + ":" + small[k.Name] + "seed=3," + key.Name + "=" + key.Default
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

// TestQualityKeys: the kinds with a draft-quality knob name the key a
// sweep's quality axis sets.
func TestQualityKeys(t *testing.T) {
	t.Parallel()
	want := map[string]string{"dirichlet": "beta", "markov": "quality", "temperature": "", "zipf": ""}
	for _, k := range source.All() {
		if k.Quality != want[k.Name] {
			t.Errorf("%s: quality key %q, want %q", k.Name, k.Quality, want[k.Name])
		}
	}
}

// TestRegisterRefuses: Register panics on kinds that could not work and
// on a name taken, and leaves the registry as it was.
func TestRegisterRefuses(t *testing.T) {
	t.Parallel()
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
	if got := len(source.Kinds()); got != 4 {
		t.Errorf("%d kinds after refused registrations, want 4", got)
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

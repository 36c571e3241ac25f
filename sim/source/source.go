package source

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/specsim/specsim/sim"
)

// Kind is one source kind: its name, the documentation of its keys and
// its parser. A kind's file registers it from an init function:
//
//	func init() { Register(Kind{Name: "zipf", Summary: ..., Keys: ..., Parse: parseZipf}) }
type Kind struct {
	// Name is the spec's kind, the text before the colon.
	Name string
	// Summary is the one-line description 'simulate list sources' prints.
	Summary string
	// Keys are the spec keys the kind takes, in the order messages list
	// them, with their defaults: Args reads a key's default from here.
	// Every kind also takes seed (SeedKey), which the registry reads.
	Keys []Key
	// Quality names the key that sets the draft's closeness to the target
	// (a sweep's quality axis sets it); "" if the kind has none.
	Quality string
	// Parse reads the kind's keys from a and returns its config. Typed
	// reads remember the first bad value (the registry reports it), so
	// Parse returns an error only for what the reads cannot see.
	Parse func(a *Args) (Config, error)
}

// Key documents one spec key of a kind.
type Key struct {
	Name string `json:"name"`
	// Default is the value taken when a spec omits the key, as a spec
	// would write it ("" for SeedKey, whose default is the caller's).
	Default string `json:"default,omitempty"`
	// Doc says what the key sets and which values it accepts.
	Doc string `json:"doc"`
}

// SeedKey is the key every kind takes: the seed of the source's stream,
// by default the seed the caller passes (the run's), which is why it has
// no Default.
var SeedKey = Key{Name: "seed", Doc: "seed of the source's own stream (default: the run's seed; a fixed seed keeps the source while the run's seed changes)"}

// Config is a parsed spec of one kind: the kind's own config type.
type Config interface {
	// Check reports every error Build would return for these parameters,
	// the memory budget included, without drawing or allocating the
	// source (a dirichlet pool's calibration to its beta can still fail
	// when built).
	Check() error
	// Build draws the source from rng.
	Build(rng *rand.Rand) (sim.BlockSource, error)
}

var (
	mu    sync.RWMutex
	kinds = map[string]Kind{}
)

// Register adds a kind to the registry. It panics on a kind that cannot
// work (no name, a colon or comma in it, no Parse, a key named seed or
// given twice, a Quality key it does not take) or on a name registered
// before: both are programming errors of the kind's file.
func Register(k Kind) {
	bad := func(format string, v ...any) {
		panic(fmt.Sprintf("source: Register %q: "+format, append([]any{k.Name}, v...)...))
	}
	if k.Name == "" || strings.ContainsAny(k.Name, ":,= ") {
		bad("a kind needs a name without ':', ',', '=' or spaces")
	}
	if k.Parse == nil {
		bad("no Parse")
	}
	seen := map[string]bool{}
	for _, key := range k.Keys {
		switch {
		case key.Name == SeedKey.Name:
			bad("key seed is the registry's")
		case key.Name == "" || strings.ContainsAny(key.Name, ":,= "):
			bad("key %q is not a spec key", key.Name)
		case seen[key.Name]:
			bad("key %s given twice", key.Name)
		}
		seen[key.Name] = true
	}
	if k.Quality != "" && !seen[k.Quality] {
		bad("quality key %s is not among its keys", k.Quality)
	}
	mu.Lock()
	defer mu.Unlock()
	if _, dup := kinds[k.Name]; dup {
		bad("registered twice")
	}
	kinds[k.Name] = k
}

// Lookup returns the kind registered under name.
func Lookup(name string) (Kind, bool) {
	mu.RLock()
	defer mu.RUnlock()
	k, ok := kinds[name]
	return k, ok
}

// Kinds lists the registered kinds' names, sorted.
func Kinds() []string {
	mu.RLock()
	defer mu.RUnlock()
	names := make([]string, 0, len(kinds))
	for n := range kinds {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// All returns the registered kinds sorted by name.
func All() []Kind {
	var out []Kind
	for _, n := range Kinds() {
		k, _ := Lookup(n)
		out = append(out, k)
	}
	return out
}

// KeyNames lists k's keys as messages do: "V, a, beta, contexts, seed".
func (k Kind) KeyNames() string {
	names := make([]string, 0, len(k.Keys)+1)
	for _, key := range k.Keys {
		names = append(names, key.Name)
	}
	return strings.Join(append(names, SeedKey.Name), ", ")
}

// Spec is a parsed source description "kind:key=value,key=value".
type Spec struct {
	Kind string
	Args map[string]string
}

// ParseSpec parses "kind:k=v,k=v". Keys may not repeat; values are kept as
// strings for the kind to interpret. The kind need not be registered.
func ParseSpec(s string) (Spec, error) {
	kind, rest, _ := strings.Cut(strings.TrimSpace(s), ":")
	if kind == "" {
		return Spec{}, fmt.Errorf("source %q: missing kind; write kind:key=value,... (kinds: %s)", s, strings.Join(Kinds(), ", "))
	}
	sp := Spec{Kind: kind, Args: map[string]string{}}
	if strings.TrimSpace(rest) == "" {
		return sp, nil
	}
	for _, kv := range strings.Split(rest, ",") {
		k, v, ok := strings.Cut(kv, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok || k == "" || v == "" {
			return Spec{}, fmt.Errorf("source %q: %q is not key=value", s, kv)
		}
		if _, dup := sp.Args[k]; dup {
			return Spec{}, fmt.Errorf("source %q: key %s given twice", s, k)
		}
		sp.Args[k] = v
	}
	return sp, nil
}

// String renders the spec canonically (keys sorted).
func (sp Spec) String() string {
	keys := make([]string, 0, len(sp.Args))
	for k := range sp.Args {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + sp.Args[k]
	}
	return sp.Kind + ":" + strings.Join(parts, ",")
}

// Args is what a kind's Parse reads: the spec's keys, typed, and what the
// caller builds the source for. A read marks its key as taken and returns
// the spec's value, or the key's documented default when the spec omits
// it; a value that does not parse is remembered as the error
// "source KIND: key="value" is not WHAT" (the first one wins) and the read
// returns the zero value.
type Args struct {
	// Spec is the canonical spec (keys sorted): the name of the built
	// source.
	Spec string
	// Gamma is the draft length γ the source drafts per block (pools hold
	// γ draft rows and γ+1 target rows per context).
	Gamma int
	// MemBudget is the most bytes the source may take (0:
	// sim.DefaultMemBudget).
	MemBudget int64

	kind *Kind
	sp   Spec
	used map[string]bool
	err  error
}

// Float reads key as a finite number.
func (a *Args) Float(key string) float64 {
	return read(a, key, a.def(key), "a finite number", parseFinite)
}

// Int reads key as an integer.
func (a *Args) Int(key string) int {
	return read(a, key, a.def(key), "an integer", strconv.Atoi)
}

// Uint64 reads key as a non-negative integer.
func (a *Args) Uint64(key string) uint64 {
	return read(a, key, a.def(key), "a non-negative integer", parseUint64)
}

func parseFinite(s string) (float64, error) {
	v, err := strconv.ParseFloat(s, 64)
	if err == nil && (math.IsNaN(v) || math.IsInf(v, 0)) {
		err = strconv.ErrRange
	}
	return v, err
}

func parseUint64(s string) (uint64, error) { return strconv.ParseUint(s, 10, 64) }

// def returns key's documented default; a kind reading a key it does not
// document is a programming error of its file.
func (a *Args) def(key string) string {
	for _, k := range a.kind.Keys {
		if k.Name == key {
			return k.Default
		}
	}
	panic(fmt.Sprintf("source: kind %s reads key %q, which its Keys do not document", a.kind.Name, key))
}

// read marks k used and returns its value read by parse, or the default
// def (parsed the same way) when the spec does not give it.
func read[T any](a *Args, k, def, what string, parse func(string) (T, error)) T {
	a.used[k] = true
	s, ok := a.sp.Args[k]
	if !ok {
		v, err := parse(def)
		if err != nil {
			panic(fmt.Sprintf("source: kind %s: the default %s=%q is not %s", a.kind.Name, k, def, what))
		}
		return v
	}
	v, err := parse(s)
	if err != nil && a.err == nil {
		a.err = fmt.Errorf("source %s: %s=%q is not %s", a.sp.Kind, k, s, what)
	}
	return v
}

// done returns the first bad value, or else the first key (in sorted
// order) no read took.
func (a *Args) done() error {
	if a.err != nil {
		return a.err
	}
	keys := make([]string, 0, len(a.sp.Args))
	for k := range a.sp.Args {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if !a.used[k] {
			return fmt.Errorf("source %s: unknown key %q; it takes %s", a.sp.Kind, k, a.kind.KeyNames())
		}
	}
	return nil
}

// parse parses spec into its kind's config; seed is the default of the
// spec's seed key, and the seed returned the one the source is drawn
// with.
func parse(spec string, gamma int, seed uint64, budget int64) (Config, Kind, string, uint64, error) {
	sp, err := ParseSpec(spec)
	if err != nil {
		return nil, Kind{}, "", 0, err
	}
	k, ok := Lookup(sp.Kind)
	if !ok {
		return nil, Kind{}, "", 0, fmt.Errorf("source %q: unknown kind %q; kinds: %s", spec, sp.Kind, strings.Join(Kinds(), ", "))
	}
	a := &Args{Spec: sp.String(), Gamma: gamma, MemBudget: budget, kind: &k, sp: sp, used: map[string]bool{}}
	seed = read(a, SeedKey.Name, strconv.FormatUint(seed, 10), "a non-negative integer", parseUint64)
	cfg, err := k.Parse(a)
	if derr := a.done(); derr != nil {
		return nil, Kind{}, "", 0, derr
	}
	if err != nil {
		return nil, Kind{}, "", 0, err
	}
	return cfg, k, a.Spec, seed, nil
}

// New builds the source spec describes, drafting γ = gamma tokens per
// block, within budget bytes (0: sim.DefaultMemBudget; a larger source is
// refused with an error wrapping sim.ErrMemBudget before it allocates).
// seed is used where the spec gives no seed= of its own; the source is
// drawn from the stream sim.NewRand(seed, sim.StreamID("source/"+kind)).
// The source's Spec is the canonical spec (keys sorted).
func New(spec string, gamma int, seed uint64, budget int64) (sim.Source, error) {
	cfg, k, canon, seed, err := parse(spec, gamma, seed, budget)
	if err != nil {
		return sim.Source{}, err
	}
	bs, err := cfg.Build(sim.NewRand(seed, sim.StreamID("source/"+k.Name)))
	if err != nil {
		return sim.Source{}, err
	}
	return sim.Source{Spec: canon, BlockSource: bs}, nil
}

// A Stater is a Config whose model pair has a Markov structure whose size
// is known before it is built: states contexts that determine the target
// row, over a vocabulary of v tokens. A check's per-state tallies grow
// with states·v, so their memory can be refused before the pair is drawn.
type Stater interface {
	States() (states, v int)
}

// States returns the Markov states and vocabulary of the pair spec
// describes, without building it; ok is false for a spec whose kind does
// not know them beforehand (pools, or a bad spec: New reports its error).
func States(spec string, gamma int, budget int64) (states, v int, ok bool) {
	cfg, _, _, _, err := parse(spec, gamma, 0, budget)
	if err != nil {
		return 0, 0, false
	}
	st, ok := cfg.(Stater)
	if !ok {
		return 0, 0, false
	}
	states, v = st.States()
	return states, v, true
}

// Check reports every error New(spec, gamma, ·, budget) would return for
// its parameters, memory budget included, without drawing or allocating
// the source: sweep specs call it for every cell when they are loaded. (A
// dirichlet pool's calibration to its beta can still fail when built.)
func Check(spec string, gamma int, budget int64) error {
	cfg, _, _, _, err := parse(spec, gamma, 0, budget)
	if err != nil {
		return err
	}
	return cfg.Check()
}

package sweep

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/BurntSushi/toml"
	"github.com/specsim/specsim/experiments"
	"github.com/specsim/specsim/internal/fsutil"
	"github.com/specsim/specsim/table"
)

// Spec is a declarative sweep: an experiment, the axes of its grid and
// the metric columns to keep. It is read from TOML by ParseSpec:
//
//	experiment = "verify"        # a registered experiment
//	seed = 1                     # optional master seed (a --seed flag overrides)
//	scale = 1.0                  # optional Config.Scale
//	metrics = ["mean_accepted", "mean_emitted", "alpha_hat"]
//	zip = [["source", "quality"]] # optional: axes that vary together
//	mode = "grid"                # or "zip": every axis in one zipped group
//
//	[axes]
//	source = ["markov:V=4,order=1,seed=7", "markov:V=4,order=1,seed=8"]
//	algo = ["token", "greedy"]
//	gamma = [1, 2, 3]
//	trials = 20000
//	replicate = [0, 1]
//	param.D = [0.1, 0.2]         # a rule parameter, key "param.D"
//
// An axis is a TOML array or a scalar (one value); nested tables give dotted
// axis names. The cells are the Cartesian product of the zipped groups and
// the remaining axes, in the order the axes appear in the file, the last
// axis varying fastest; a cell's key lists its axes in file order.
type Spec struct {
	// Experiment is the registered experiment the cells run through.
	Experiment string
	// Seed is the master seed, 0 if the spec gives none.
	Seed uint64
	// Scale is experiments.Config.Scale (0: 1).
	Scale float64
	// Metrics are the metric columns to keep (empty: all).
	Metrics []string
	// Axes are the axes in file order.
	Axes []Axis
	// Zip lists groups of axis names that vary together.
	Zip [][]string
	// Default marks a spec made by DefaultSpec (the experiment's own grid).
	Default bool
}

// Axis is one named axis with its values (float64, int64, string or bool).
type Axis struct {
	Name   string
	Values []any
}

type specFile struct {
	Experiment string         `toml:"experiment"`
	Seed       *int64         `toml:"seed"`
	Scale      *float64       `toml:"scale"`
	Metrics    []string       `toml:"metrics"`
	Mode       string         `toml:"mode"`
	Zip        [][]string     `toml:"zip"`
	Axes       map[string]any `toml:"axes"`
}

// MaxSpecBytes is the largest spec file LoadSpec reads (4 MiB: an axis
// of half a million values); a larger one is refused before it is read.
const MaxSpecBytes = 4 << 20

// LoadSpec reads and parses a TOML spec file: a regular file (a FIFO is
// refused, not waited on) of at most MaxSpecBytes.
func LoadSpec(path string) (*Spec, error) {
	b, err := fsutil.ReadFile(path, MaxSpecBytes)
	if err != nil {
		return nil, fmt.Errorf("spec: %w", err)
	}
	s, err := ParseSpec(string(b))
	if err != nil {
		return nil, fmt.Errorf("spec %s: %w", path, err)
	}
	return s, nil
}

// ParseSpec parses a TOML spec and checks it: the experiment must be
// registered, keys and axes known, the grid non-empty.
func ParseSpec(text string) (*Spec, error) {
	f, md, err := decodeSpec(text)
	if err != nil {
		return nil, err
	}
	s := &Spec{Experiment: f.Experiment, Metrics: f.Metrics, Zip: f.Zip}
	if f.Seed != nil {
		if *f.Seed <= 0 {
			return nil, fmt.Errorf("field seed = %d; use a positive integer (or leave it out)", *f.Seed)
		}
		s.Seed = uint64(*f.Seed)
	}
	if f.Scale != nil {
		if !(*f.Scale > 0) || math.IsInf(*f.Scale, 0) {
			return nil, fmt.Errorf("field scale = %g; use a positive factor", *f.Scale)
		}
		s.Scale = *f.Scale
	}
	if s.Axes, err = specAxes(f, md); err != nil {
		return nil, err
	}
	switch f.Mode {
	case "", "grid":
	case "zip":
		if len(s.Zip) > 0 {
			return nil, fmt.Errorf("field mode = \"zip\" zips every axis; drop the zip groups or use mode = \"grid\"")
		}
		var all []string
		for _, a := range s.Axes {
			all = append(all, a.Name)
		}
		if len(all) > 0 {
			s.Zip = [][]string{all}
		}
	default:
		return nil, fmt.Errorf("field mode = %q; use \"grid\" or \"zip\"", f.Mode)
	}
	if err := s.Check(); err != nil {
		return nil, err
	}
	return s, nil
}

// decodeSpec decodes a spec's TOML text (bounded in size and shape) into
// its file form, refusing keys a spec does not have and a missing
// experiment; md is the decoding's metadata (the axes' file order).
func decodeSpec(text string) (specFile, toml.MetaData, error) {
	var f specFile
	if len(text) > MaxSpecBytes {
		return f, toml.MetaData{}, fmt.Errorf("the spec has %d bytes, more than %d", len(text), MaxSpecBytes)
	}
	if err := checkTOMLShape(text); err != nil {
		return f, toml.MetaData{}, fmt.Errorf("TOML: %w", err)
	}
	md, err := toml.Decode(text, &f)
	if err != nil {
		return f, md, fmt.Errorf("TOML: %w", err)
	}
	var keys []string
	for _, k := range md.Undecoded() {
		if len(k) > 0 && k[0] == "axes" {
			continue
		}
		keys = append(keys, k.String())
	}
	if len(keys) > 0 {
		return f, md, fmt.Errorf("unknown key %s; a spec has experiment, seed, scale, metrics, mode, zip and [axes]", strings.Join(keys, ", "))
	}
	if f.Experiment == "" {
		return f, md, fmt.Errorf("field experiment is missing; name one of: %s", strings.Join(experiments.Names(), ", "))
	}
	return f, md, nil
}

// specAxes reads the axes of f, in file order (md.Keys lists every key as
// it appears), each with its values (axisValues).
func specAxes(f specFile, md toml.MetaData) ([]Axis, error) {
	var order []string
	for _, k := range md.Keys() {
		if len(k) < 2 || k[0] != "axes" || md.Type(k...) == "Hash" {
			continue
		}
		name := strings.Join(k[1:], ".")
		if !slices.Contains(order, name) {
			order = append(order, name)
		}
	}
	flat := map[string]any{}
	flatten("", f.Axes, flat)
	var axes []Axis
	for _, name := range order {
		vals, err := axisValues(name, flat[name])
		if err != nil {
			return nil, err
		}
		axes = append(axes, Axis{Name: name, Values: vals})
	}
	return axes, nil
}

func flatten(prefix string, m map[string]any, out map[string]any) {
	for k, v := range m {
		name := k
		if prefix != "" {
			name = prefix + "." + k
		}
		if sub, ok := v.(map[string]any); ok {
			flatten(name, sub, out)
			continue
		}
		out[name] = v
	}
}

func axisValues(name string, v any) ([]any, error) {
	var raw []any
	switch x := v.(type) {
	case []any:
		raw = x
	case []map[string]any:
		return nil, fmt.Errorf("axis %s: tables are not axis values; give numbers, strings or booleans", name)
	default:
		raw = []any{x}
	}
	if len(raw) == 0 {
		return nil, fmt.Errorf("axis %s is empty: the grid would have no cells; give at least one value", name)
	}
	if len(raw) > MaxCells {
		return nil, fmt.Errorf("axis %s has %d values; a grid has at most %d cells, so split the sweep into several specs", name, len(raw), MaxCells)
	}
	out := make([]any, len(raw))
	seen := make(map[any]struct{}, len(raw)) // == on the values, in linear time
	for i, r := range raw {
		switch x := r.(type) {
		case int64, float64, string, bool:
			out[i] = x
		default:
			return nil, fmt.Errorf("axis %s value %d (%v) is a %T; give numbers, strings or booleans", name, i, r, r)
		}
		if _, dup := seen[out[i]]; dup {
			return nil, fmt.Errorf("axis %s lists %v twice; cells must be distinct", name, out[i])
		}
		seen[out[i]] = struct{}{}
	}
	return out, nil
}

// MaxTOMLDepth bounds how deeply a spec's TOML nests arrays and inline
// tables, and how many parts a dotted key has: the TOML parser takes time
// quadratic in both (32 KB of nested inline tables took 27 s), and a spec
// needs a handful.
const MaxTOMLDepth = 32

// MaxTOMLKeys bounds how many keys a spec's TOML names, counting every
// part of a dotted key and of a table header: the parser keeps each
// table's full key path, so a 4 MiB spec of 35,000 headers 31 parts deep
// took 1.1 GB and 17 s; a spec names a few dozen (an axis of half a
// million values is one key).
const MaxTOMLKeys = 4096

// checkTOMLShape refuses TOML nested deeper than MaxTOMLDepth, with a
// dotted key of more parts, or naming more than MaxTOMLKeys keys, before
// the parser sees it. It scans the text
// once, skipping strings and comments: brackets and braces count depth,
// and a dot not between two digits (a number's) counts one part of the
// key it is in.
func checkTOMLShape(text string) error {
	depth, parts, line, keys := 0, 0, 1, 0
	digit := func(i int) bool { return i >= 0 && i < len(text) && text[i] >= '0' && text[i] <= '9' }
	for i := 0; i < len(text); i++ {
		c := text[i]
		if keys > MaxTOMLKeys {
			return fmt.Errorf("line %d: more than %d keys (each part of a dotted key or table header counts); a spec names a few dozen", line, MaxTOMLKeys)
		}
		switch {
		case c == '\n':
			line++
			parts = 0
		case c == '#':
			for i < len(text) && text[i] != '\n' {
				i++
			}
			i--
		case c == '"' || c == '\'':
			q := string(c)
			if strings.HasPrefix(text[i:], q+q+q) {
				end := strings.Index(text[i+3:], q+q+q)
				if end < 0 {
					return fmt.Errorf("line %d: an unterminated multi-line string", line)
				}
				line += strings.Count(text[i:i+3+end], "\n")
				i += 3 + end + 2
				continue
			}
			j := i + 1
			for ; j < len(text) && text[j] != c && text[j] != '\n'; j++ {
				if c == '"' && text[j] == '\\' {
					j++
				}
			}
			i = j
		case c == '[' || c == '{':
			if depth == 0 && c == '[' {
				keys++ // a table header's first part
			}
			if depth++; depth > MaxTOMLDepth {
				return fmt.Errorf("line %d: arrays and inline tables nested deeper than %d; a spec needs a few levels", line, MaxTOMLDepth)
			}
			parts = 0
		case c == ']' || c == '}':
			depth--
			parts = 0
		case c == '.':
			if !(digit(i-1) && digit(i+1)) {
				keys++
				if parts++; parts > MaxTOMLDepth {
					return fmt.Errorf("line %d: a dotted key of more than %d parts; a spec needs a few", line, MaxTOMLDepth)
				}
			}
		case c == '=' || c == ',':
			if c == '=' {
				keys++
			}
			parts = 0
		}
	}
	return nil
}

// Axis returns the axis called name, or nil.
func (s *Spec) Axis(name string) *Axis {
	for i := range s.Axes {
		if s.Axes[i].Name == name {
			return &s.Axes[i]
		}
	}
	return nil
}

// CheckMem checks what the cells of s would build against budget bytes
// (0: sim.DefaultMemBudget), without building it: a spec-driven
// experiment's sources (SpecKind.CheckMem). A front end calls it after
// loading the spec, before any cell runs; it returns nil for experiments
// that declare no such check.
func (s *Spec) CheckMem(budget int64) error {
	e, err := gridOf(s.Experiment)
	if err != nil || s.Default || e.Spec == nil || e.Spec.CheckMem == nil {
		return nil // Check reports a bad experiment
	}
	cells, err := s.Cells(experiments.Config{})
	if err != nil {
		return err
	}
	return e.Spec.CheckMem(cells, budget)
}

// Check validates s against its experiment: registered, the axes known to
// it, the zip groups well formed, the grid non-empty. What the cells
// would build is checked against the memory budget by CheckMem.
func (s *Spec) Check() error {
	e, err := gridOf(s.Experiment)
	if err != nil {
		return fmt.Errorf("field experiment: %w", err)
	}
	inZip := map[string]bool{}
	for gi, g := range s.Zip {
		if len(g) == 0 {
			return fmt.Errorf("zip group %d is empty", gi)
		}
		n := -1
		for _, name := range g {
			a := s.Axis(name)
			if a == nil {
				return fmt.Errorf("zip group %d names axis %q, which is not under [axes]", gi, name)
			}
			if inZip[name] {
				return fmt.Errorf("axis %s is in two zip groups", name)
			}
			inZip[name] = true
			if n >= 0 && len(a.Values) != n {
				return fmt.Errorf("zip group %d: axis %s has %d values but %s has %d; zipped axes need equal lengths", gi, name, len(a.Values), g[0], n)
			}
			n = len(a.Values)
		}
	}
	if s.Default {
		return nil
	}
	if len(s.Axes) == 0 {
		return fmt.Errorf("[axes] is empty: the grid has no cells; give at least one axis")
	}
	if k := e.Spec; k != nil {
		for _, m := range s.Metrics {
			if !slices.Contains(k.Metrics, m) {
				return fmt.Errorf("field metrics: unknown metric %q for experiment %s; it reports %s", m, s.Experiment, strings.Join(k.Metrics, ", "))
			}
		}
		cells, err := s.Cells(experiments.Config{})
		if err != nil {
			return err
		}
		return k.CheckCells(cells)
	}
	// A named experiment: its axes are the key names of its default cells.
	cells, err := e.Cells(experiments.Config{Seed: 1, Scale: 1})
	if err != nil {
		return fmt.Errorf("experiment %s: listing its default cells: %w", e.Name, err)
	}
	known := map[string]bool{}
	var names []string
	for _, c := range cells {
		for _, kv := range c.Key {
			if !known[kv.K] {
				known[kv.K] = true
				names = append(names, kv.K)
			}
		}
	}
	for _, a := range s.Axes {
		if !known[a.Name] {
			return fmt.Errorf("unknown axis %q for experiment %s; its axes are %s", a.Name, e.Name, strings.Join(names, ", "))
		}
	}
	return nil
}

// DefaultSpec is the spec of a named experiment's own grid: no axes (the
// cells come from experiments.Experiment.Cells), all metrics.
func DefaultSpec(name string) (*Spec, error) {
	if _, err := gridOf(name); err != nil {
		return nil, err
	}
	return &Spec{Experiment: name, Default: true}, nil
}

// Cells expands the spec into cells: the experiment's own cells for a
// default spec, else the product of the zip groups and the remaining axes.
func (s *Spec) Cells(cfg experiments.Config) ([]table.Cell, error) {
	e, err := gridOf(s.Experiment)
	if err != nil {
		return nil, err
	}
	if s.Default {
		cells, err := e.Cells(cfg)
		if err != nil {
			return nil, err
		}
		if len(cells) == 0 {
			return nil, fmt.Errorf("experiment %s: the grid is empty", e.Name)
		}
		return cells, nil
	}
	// Dimensions in file order of their first axis.
	type dim struct {
		axes []*Axis
		n    int
	}
	var dims []dim
	placed := map[string]bool{}
	for i := range s.Axes {
		a := &s.Axes[i]
		if placed[a.Name] {
			continue
		}
		d := dim{axes: []*Axis{a}, n: len(a.Values)}
		placed[a.Name] = true
		for _, g := range s.Zip {
			if slices.Contains(g, a.Name) {
				for _, other := range g {
					if !placed[other] {
						d.axes = append(d.axes, s.Axis(other))
						placed[other] = true
					}
				}
			}
		}
		dims = append(dims, d)
	}
	total := 1
	for _, d := range dims {
		if d.n == 0 {
			return nil, fmt.Errorf("the grid is empty")
		}
		if total > MaxCells/d.n {
			return nil, fmt.Errorf("the grid has more than %d cells (axis %s multiplies it by %d); split the sweep into several specs", MaxCells, d.axes[0].Name, d.n)
		}
		total *= d.n
	}
	pos := map[string]int{}
	for i, a := range s.Axes {
		pos[a.Name] = i
	}
	cells := make([]table.Cell, 0, total)
	idx := make([]int, len(dims))
	for range total {
		key := make([]table.KV, len(s.Axes))
		for di, d := range dims {
			for _, a := range d.axes {
				key[pos[a.Name]] = table.KV{K: a.Name, V: a.Values[idx[di]]}
			}
		}
		cells = append(cells, table.Cell{Key: key})
		for di := len(dims) - 1; di >= 0; di-- {
			idx[di]++
			if idx[di] < dims[di].n {
				break
			}
			idx[di] = 0
		}
	}
	return cells, nil
}

// gridOf looks up the experiment called name, which a sweep runs through
// its cells: an experiment without a grid (Whole only) is an error.
func gridOf(name string) (experiments.Experiment, error) {
	e, err := experiments.Lookup(name)
	if err != nil {
		return e, err
	}
	if e.Cells == nil {
		return e, fmt.Errorf("experiment %s has no grid of cells to sweep; the main job (report reproduce) computes it whole", name)
	}
	return e, nil
}

// MaxCells is the largest grid a spec may expand to: a million cells, each
// a Cell of a few keys, is about 100 MB; a larger sweep is split into
// several specs (or shards of them). The product is checked axis by axis
// so it cannot overflow.
const MaxCells = 1_000_000

// canonical is the JSON form hashed by Hash.
type canonical struct {
	Experiment string     `json:"experiment"`
	Scale      float64    `json:"scale"`
	Metrics    []string   `json:"metrics"`
	Axes       []canonAx  `json:"axes"`
	Zip        [][]string `json:"zip"`
	Default    bool       `json:"default"`
}

type canonAx struct {
	Name   string   `json:"name"`
	Values []string `json:"values"`
}

// Canonical renders the spec as canonical JSON (seed excluded: the seed
// is provenance of its own). Equal specs give equal bytes.
func (s *Spec) Canonical() string {
	c := canonical{Experiment: s.Experiment, Scale: s.Scale, Metrics: s.Metrics, Zip: s.Zip, Default: s.Default}
	if c.Scale == 0 {
		c.Scale = 1
	}
	for _, a := range s.Axes {
		ca := canonAx{Name: a.Name}
		for _, v := range a.Values {
			ca.Values = append(ca.Values, fmt.Sprintf("%T:%v", v, v))
		}
		c.Axes = append(c.Axes, ca)
	}
	sort.SliceStable(c.Zip, func(i, j int) bool { return strings.Join(c.Zip[i], ",") < strings.Join(c.Zip[j], ",") })
	b, _ := json.Marshal(c)
	return string(b)
}

// Hash is the hex SHA-256 of Canonical.
func (s *Spec) Hash() string {
	h := sha256.Sum256([]byte(s.Canonical()))
	return hex.EncodeToString(h[:])
}

// SpecFromCanonical rebuilds a spec from Canonical's output (as stored in
// a results file), so that a merge can list the cells it expects.
func SpecFromCanonical(text string) (*Spec, error) {
	var c canonical
	if err := json.Unmarshal([]byte(text), &c); err != nil {
		return nil, err
	}
	s := &Spec{Experiment: c.Experiment, Scale: c.Scale, Metrics: c.Metrics, Zip: c.Zip, Default: c.Default}
	for _, ca := range c.Axes {
		a := Axis{Name: ca.Name}
		for _, v := range ca.Values {
			t, val, _ := strings.Cut(v, ":")
			var x any
			var err error
			switch t {
			case "string":
				x = val
			case "int64":
				var n int64
				_, err = fmt.Sscan(val, &n)
				x = n
			case "float64":
				var f float64
				_, err = fmt.Sscan(val, &f)
				x = f
			case "bool":
				x = val == "true"
			default:
				err = fmt.Errorf("unknown type %q", t)
			}
			if err != nil {
				return nil, fmt.Errorf("axis %s value %q: %v", ca.Name, v, err)
			}
			a.Values = append(a.Values, x)
		}
		s.Axes = append(s.Axes, a)
	}
	return s, nil
}

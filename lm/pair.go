package lm

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/gob"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/specsim/specsim/internal/fsutil"
	"github.com/specsim/specsim/sim"
)

// Defaults of a pair spec.
const (
	DefaultV        = 4096
	DefaultBytes    = 1 << 20
	DefaultOrder    = 5
	DefaultMaxMatch = 3
)

// ModelSpec is one side of a pair: "kind:key=value,...". The target gives
// the corpus kind (code or prose) and the tokenizer; the draft inherits
// them and may omit the kind.
//
// Keys: order (1..6), cache (λ of the cache model, [0, 1)), match (the
// cache's longest suffix, default 3), T (temperature, > 0), frac (the
// fraction of the training files the model sees, (0, 1]); the target also
// takes V (tokenizer vocabulary: 256 is byte-level, more trains a BPE),
// bytes (corpus size cap) and root (corpus directory).
type ModelSpec struct {
	Kind     string  `json:"kind"`
	Order    int     `json:"order"`
	Cache    float64 `json:"cache"`
	MaxMatch int     `json:"match"`
	T        float64 `json:"T"`
	Frac     float64 `json:"frac"`
	V        int     `json:"V,omitempty"`
	Bytes    int64   `json:"bytes,omitempty"`
	Root     string  `json:"root,omitempty"`
}

// ParseModelSpec parses a model spec; target selects the keys allowed.
func ParseModelSpec(s string, target bool) (ModelSpec, error) {
	if !strings.Contains(s, ":") && strings.Contains(s, "=") {
		s = ":" + s
	}
	kind, rest, _ := strings.Cut(strings.TrimSpace(s), ":")
	m := ModelSpec{Kind: kind, Order: DefaultOrder, MaxMatch: DefaultMaxMatch, T: 1, Frac: 1}
	if target {
		m.V, m.Bytes = DefaultV, DefaultBytes
		if kind == "" {
			return m, fmt.Errorf("target %q: name the corpus: code:... or prose:...", s)
		}
	} else {
		m.Order = 2
	}
	if kind != "" && kind != Code && kind != Prose {
		return m, fmt.Errorf("model %q: unknown corpus %q; use %s or %s", s, kind, Code, Prose)
	}
	seen := map[string]bool{}
	for _, kv := range strings.Split(rest, ",") {
		if strings.TrimSpace(kv) == "" {
			continue
		}
		k, v, ok := strings.Cut(kv, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok || seen[k] {
			return m, fmt.Errorf("model %q: %q is not a new key=value", s, kv)
		}
		seen[k] = true
		if err := m.set(s, k, v, target); err != nil {
			return m, err
		}
	}
	return m, m.validate(s, target)
}

// set sets the key k of the spec s to v; a target takes V, bytes and
// root besides the keys both models take.
func (m *ModelSpec) set(s, k, v string, target bool) error {
	var err error
	switch {
	case k == "order":
		m.Order, err = specInt(s, k, v)
	case k == "cache":
		m.Cache, err = specFloat(s, k, v)
	case k == "match":
		m.MaxMatch, err = specInt(s, k, v)
	case k == "T":
		m.T, err = specFloat(s, k, v)
	case k == "frac":
		m.Frac, err = specFloat(s, k, v)
	case k == "V" && target:
		m.V, err = specInt(s, k, v)
	case k == "bytes" && target:
		var n int
		n, err = specInt(s, k, v)
		m.Bytes = int64(n)
	case k == "root" && target:
		m.Root = v
	default:
		keys := "order, cache, match, T, frac"
		if target {
			keys += ", V, bytes, root"
		} else {
			keys += " (the draft shares the target's corpus and tokenizer)"
		}
		return fmt.Errorf("model %q: unknown key %q; keys: %s", s, k, keys)
	}
	return err
}

// specFloat parses the value v of key k of the spec s as a finite number.
func specFloat(s, k, v string) (float64, error) {
	x, e := strconv.ParseFloat(v, 64)
	if e != nil || math.IsNaN(x) || math.IsInf(x, 0) {
		return x, fmt.Errorf("model %q: %s=%q is not a finite number", s, k, v)
	}
	return x, nil
}

// specInt parses the value v of key k of the spec s as an integer.
func specInt(s, k, v string) (int, error) {
	x, e := strconv.Atoi(v)
	if e != nil {
		return x, fmt.Errorf("model %q: %s=%q is not an integer", s, k, v)
	}
	return x, nil
}

// validate refuses a spec (s, as written) whose values are out of range.
func (m ModelSpec) validate(s string, target bool) error {
	switch {
	case m.Order < 1 || m.Order > MaxOrder:
		return fmt.Errorf("model %q: order = %d; use 1 <= order <= %d", s, m.Order, MaxOrder)
	case checkLambda(m.Cache) != nil:
		return fmt.Errorf("model %q: %w", s, checkLambda(m.Cache))
	case m.MaxMatch < 1 || m.MaxMatch > 16:
		return fmt.Errorf("model %q: match = %d; use 1 <= match <= 16", s, m.MaxMatch)
	case !(m.T > 0 && m.T <= 100):
		return fmt.Errorf("model %q: T = %g; use a temperature in (0, 100]", s, m.T)
	case !(m.Frac > 0 && m.Frac <= 1):
		return fmt.Errorf("model %q: frac = %g; use a fraction in (0, 1]", s, m.Frac)
	case target && (m.V < 256 || m.V > 1<<16):
		return fmt.Errorf("model %q: V = %d; use 256 (bytes) to 65536", s, m.V)
	case target && m.Bytes < 1000:
		return fmt.Errorf("model %q: bytes = %d; use at least 1000", s, m.Bytes)
	}
	return nil
}

// Provenance records what a pair was trained on.
type Provenance struct {
	Corpus    Corpus    `json:"corpus"`
	Tokenizer string    `json:"tokenizer"`
	V         int       `json:"V"`
	Target    ModelSpec `json:"target"`
	Draft     ModelSpec `json:"draft"`
	// TrainTokens and HeldoutTokens count the token streams.
	TrainTokens   int `json:"train_tokens"`
	HeldoutTokens int `json:"heldout_tokens"`
	// Cached reports whether the models were read from the disk cache.
	Cached bool `json:"cached"`
}

// Pair is a target and a draft language model on one corpus and
// tokenizer, with the held-out token streams prompts are cut from.
type Pair struct {
	sim.Pair
	Tok        *Tokenizer
	Heldout    [][]int
	Provenance Provenance
	// docs are the draft's training streams (for Heads).
	docs [][]int

	headsMu sync.Mutex
	heads   []sim.Model
}

// Heads trains n Medusa-style heads of the draft's order and temperature
// on the draft's training text: head i is TrainSkipKN with skip = i, so
// head i's row after a prefix is the law of the token i positions after
// the next one, given the prefix only. Head 0 is the draft model itself
// (without its cache term: heads see the prefix through n-grams only).
// Heads are trained once per pair and shared; Heads is safe for
// concurrent use.
func (p *Pair) Heads(n int) ([]sim.Model, error) {
	if n < 1 || n > sim.MaxGamma {
		return nil, fmt.Errorf("heads: n = %d; use 1 <= n <= %d", n, sim.MaxGamma)
	}
	ds := p.Provenance.Draft
	p.headsMu.Lock()
	defer p.headsMu.Unlock()
	for i := len(p.heads); i < n; i++ {
		m, err := TrainSkipKN(p.docs, p.P.Vocab(), ds.Order, i)
		if err != nil {
			return nil, err
		}
		p.heads = append(p.heads, wrap(m, ModelSpec{T: ds.T}))
	}
	return p.heads[:n:n], nil
}

// Options are the environment of NewPair.
type Options struct {
	// CacheDir holds trained models; empty disables the disk cache.
	CacheDir string
}

// DefaultCacheDir returns the user cache directory's specsim/lm folder.
func DefaultCacheDir() string {
	d, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(d, "specsim", "lm")
}

// cached is the on-disk form of a trained pair.
type cached struct {
	Merges     [][2]int32
	P, Q       *KN
	Train, Out int
	Heldout    [][]int
	Docs       [][]int
}

// NewPair builds (or reads from the cache) the pair described by the
// target and draft specs.
func NewPair(target, draft string, opt Options) (*Pair, error) {
	return newPair(target, draft, opt)
}

// NewPairContext is NewPair with its wait listening to ctx: loading the
// corpus and training the models (seconds to minutes for a large corpus
// or vocabulary) run on their own goroutine, and NewPairContext returns
// ctx.Err() as soon as ctx is done, leaving that work to finish unseen
// (its result is dropped; a disk cache it writes is whole or absent).
func NewPairContext(ctx context.Context, target, draft string, opt Options) (*Pair, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	type built struct {
		p   *Pair
		err error
	}
	ch := make(chan built, 1)
	go func() {
		p, err := newPair(target, draft, opt)
		ch <- built{p, err}
	}()
	select {
	case b := <-ch:
		return b.p, b.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func newPair(target, draft string, opt Options) (*Pair, error) {
	ts, err := ParseModelSpec(target, true)
	if err != nil {
		return nil, err
	}
	ds, err := ParseModelSpec(draft, false)
	if err != nil {
		return nil, err
	}
	if ds.Kind == "" {
		ds.Kind = ts.Kind
	}
	if ds.Kind != ts.Kind {
		return nil, fmt.Errorf("draft corpus %s differs from the target's %s; the draft shares the target's corpus (use frac= for a smaller one)", ds.Kind, ts.Kind)
	}
	corp, texts, err := LoadCorpus(ts.Kind, ts.Root, ts.Bytes)
	if err != nil {
		return nil, err
	}
	prov := Provenance{Corpus: corp, Target: ts, Draft: ds, V: ts.V}
	// The key names what training reads (corpus hash, V, orders and
	// fractions; T, cache and match wrap the trained models). Bump the
	// version when training or the cached layout changes.
	key := fmt.Sprintf("v3|%s|V=%d|%d/%g|%d/%g", corp.SHA256, ts.V, ts.Order, ts.Frac, ds.Order, ds.Frac)
	sum := sha256.Sum256([]byte(key))
	file := ""
	if opt.CacheDir != "" {
		file = filepath.Join(opt.CacheDir, hex.EncodeToString(sum[:12])+".gob")
	}
	var c cached
	if file != "" {
		// a cache that cannot be read, decoded or checked is a miss: the
		// models are trained again and the file rewritten (a damaged one
		// used to panic generate later, or loop for ever in a lookup)
		if b, err := fsutil.ReadFile(file, maxCacheBytes); err == nil && gob.NewDecoder(bytes.NewReader(b)).Decode(&c) == nil &&
			c.check(ts, ds) == nil {
			prov.Cached = true
		} else {
			c = cached{}
		}
	}
	if !prov.Cached {
		if c, err = train(texts, ts, ds); err != nil {
			return nil, err
		}
		if file != "" {
			if err := writeCache(file, &c); err != nil {
				return nil, err
			}
		}
	}
	tok := newTokenizer(c.Merges)
	prov.Tokenizer = "bpe"
	if ts.V == 256 {
		prov.Tokenizer = "byte"
	}
	prov.V = tok.V()
	prov.TrainTokens, prov.HeldoutTokens = c.Train, c.Out
	return &Pair{
		Pair:       sim.Pair{Name: target + " / " + draft, P: wrap(c.P, ts), Q: wrap(c.Q, ds)},
		Tok:        tok,
		Heldout:    c.Heldout,
		Provenance: prov,
		docs:       c.Docs,
	}, nil
}

func wrap(m *KN, s ModelSpec) sim.Model {
	var out sim.Model = m
	if s.T != 1 {
		out = Temp{M: out, T: s.T}
	}
	if s.Cache > 0 {
		out = Cached{M: out, Lambda: s.Cache, MaxMatch: s.MaxMatch}
	}
	return out
}

func train(texts [][]byte, ts, ds ModelSpec) (cached, error) {
	var trainTexts [][]byte
	for i, t := range texts {
		if !heldOut(i) {
			trainTexts = append(trainTexts, t)
		}
	}
	tok := ByteTokenizer()
	if ts.V > 256 {
		var err error
		if tok, err = TrainBPE(trainTexts, ts.V); err != nil {
			return cached{}, err
		}
	}
	var docs, out [][]int
	c := cached{Merges: tok.Merges}
	for i, t := range texts {
		ids := tok.Encode(nil, t)
		if heldOut(i) {
			out = append(out, ids)
			c.Out += len(ids)
		} else {
			docs = append(docs, ids)
			c.Train += len(ids)
		}
	}
	sub := func(f float64) [][]int {
		n := max(1, int(math.Round(f*float64(len(docs)))))
		return docs[:n]
	}
	var err error
	if c.P, err = TrainKN(sub(ts.Frac), tok.V(), ts.Order); err != nil {
		return c, err
	}
	if c.Q, err = TrainKN(sub(ds.Frac), tok.V(), ds.Order); err != nil {
		return c, err
	}
	c.Heldout = out
	c.Docs = sub(ds.Frac)
	return c, nil
}

func writeCache(file string, c *cached) error {
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return fmt.Errorf("lm cache: %w (set another cache directory)", err)
	}
	if err := fsutil.WriteFile(file, func(w io.Writer) error { return gob.NewEncoder(w).Encode(c) }); err != nil {
		return fmt.Errorf("lm cache: %w", err)
	}
	return nil
}

// maxCacheBytes bounds a cache file read back (the largest pairs take a
// few hundred MB).
const maxCacheBytes = 4 << 30

// check reports whether a decoded cache is one training could have
// written for the specs: the tokenizer's merges refer to earlier tokens,
// both models pass KN.check over its vocabulary, and the token streams
// stay inside it.
func (c *cached) check(ts, ds ModelSpec) error {
	if c.P == nil || c.Q == nil || c.Train < 0 || c.Out < 0 {
		return errors.New("lm cache: incomplete")
	}
	if ts.V > 256 && len(c.Merges) > ts.V-256 || ts.V == 256 && len(c.Merges) != 0 {
		return fmt.Errorf("lm cache: %d merges for V = %d", len(c.Merges), ts.V)
	}
	for i, m := range c.Merges {
		if m[0] < 0 || m[1] < 0 || int(m[0]) >= 256+i || int(m[1]) >= 256+i {
			return fmt.Errorf("lm cache: merge %d refers to token %v", i, m)
		}
	}
	v := 256 + len(c.Merges)
	if err := c.P.check(v, ts.Order); err != nil {
		return fmt.Errorf("lm cache: target: %w", err)
	}
	if err := c.Q.check(v, ds.Order); err != nil {
		return fmt.Errorf("lm cache: draft: %w", err)
	}
	for _, docs := range [][][]int{c.Heldout, c.Docs} {
		for _, d := range docs {
			for _, t := range d {
				if t < 0 || t >= v {
					return fmt.Errorf("lm cache: token %d outside [0, %d)", t, v)
				}
			}
		}
	}
	return nil
}

// Prompts cuts n prompts of length tokens from the held-out streams,
// evenly spaced through their concatenation (deterministic).
func (p *Pair) Prompts(n, length int) ([][]int, error) {
	var all []int
	for _, d := range p.Heldout {
		all = append(all, d...)
	}
	if n < 1 || length < 1 {
		return nil, fmt.Errorf("prompts: n = %d, length = %d; use positive values", n, length)
	}
	if len(all) < length {
		return nil, fmt.Errorf("prompts: the held-out text has %d tokens, fewer than the prompt length %d; use a shorter prompt or a larger corpus (bytes=)", len(all), length)
	}
	out := make([][]int, n)
	span := len(all) - length
	for i := range out {
		off := 0
		if n > 1 {
			off = i * span / (n - 1)
		}
		out[i] = all[off : off+length : off+length]
	}
	return out, nil
}

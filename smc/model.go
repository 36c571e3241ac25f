package smc

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/specsim/specsim/internal/diag"
	"github.com/specsim/specsim/sim"
)

// ErrBadModel is wrapped by every error about a Feynman–Kac model's
// parameters; the message names the field and the fix. It is a usage
// error (diag.ErrUsage).
var ErrBadModel = diag.New(diag.ErrUsage, "smc: bad model")

// MaxT bounds the horizon T of a Model (every string ends within T tokens).
const MaxT = 64

// State is s_{t-1}, the string a kernel step extends, as the potentials
// see it.
type State struct {
	// Gen is the generated part of s_{t-1} (the prompt excluded); its
	// length is t-1.
	Gen []int
	// Ctx is the prompt followed by Gen: what models condition on.
	Ctx []int
	// EOS is the end-of-string token and T the horizon: the child Gen+x
	// is finished when x == EOS or len(Gen)+1 == T.
	EOS, T int
	// Scratch is a row of length V the potential may overwrite.
	Scratch []float64
}

// Final reports whether the child s_{t-1}+x is a finished string.
func (s State) Final(x int) bool { return x == s.EOS || len(s.Gen)+1 == s.T }

// Potential is one factor of G_t. Weigh multiplies g[x] by
// G_t(s_{t-1}, s_{t-1}+x) ≥ 0 for every token x (len(g) = V). It must not
// keep st's slices and must be safe for concurrent use with distinct
// States.
type Potential interface {
	Weigh(st State, g []float64)
	String() string
}

// Forbid is the hard constraint "no token from S": G = 0 when x ∈ S.
type Forbid struct{ S []int }

// Weigh zeroes the forbidden tokens.
func (f Forbid) Weigh(_ State, g []float64) {
	for _, x := range f.S {
		g[x] = 0
	}
}

func (f Forbid) String() string { return "forbid:" + joinInts(f.S) }

// EndWithin is the hard constraint "ends within T tokens": a string that
// reaches the horizon T without EOS gets G = 0.
type EndWithin struct{}

// Weigh zeroes every non-EOS token at the horizon.
func (EndWithin) Weigh(st State, g []float64) {
	if len(st.Gen)+1 != st.T {
		return
	}
	for x := range g {
		if x != st.EOS {
			g[x] = 0
		}
	}
}

func (EndWithin) String() string { return "end" }

// Length is a length target: a finished string whose length L (tokens
// before EOS; T for a string cut at the horizon) is outside [Min, Max]
// gets G = 0.
type Length struct{ Min, Max int }

// Weigh zeroes the finishing tokens that give a length outside the range.
func (l Length) Weigh(st State, g []float64) {
	for x := range g {
		if !st.Final(x) {
			continue
		}
		L := len(st.Gen)
		if x != st.EOS {
			L++
		}
		if L < l.Min || L > l.Max {
			g[x] = 0
		}
	}
}

func (l Length) String() string { return fmt.Sprintf("length:%d-%d", l.Min, l.Max) }

// Keyword is a keyword target: a finished string that does not contain
// the token Tok gets G = 0.
type Keyword struct{ Tok int }

// Weigh zeroes the finishing tokens of strings without the keyword.
func (k Keyword) Weigh(st State, g []float64) {
	if slices.Contains(st.Gen, k.Tok) {
		return
	}
	for x := range g {
		if x != k.Tok && st.Final(x) {
			g[x] = 0
		}
	}
}

func (k Keyword) String() string { return "keyword:" + strconv.Itoa(k.Tok) }

// Expert is a soft score: a second model's likelihood raised to Power,
//
//	G_t(s, s+x) = m(x | ctx)^Power,
//
// so with M the first model the posterior is the product of experts
// P(s) ∝ M(s)·m(s)^Power (Hinton 2002, "Training products of experts by
// minimizing contrastive divergence", Neural Computation 14(8)).
type Expert struct {
	Name  string
	M     sim.Model
	Power float64
}

// Weigh multiplies g by the expert's row to the power.
func (e Expert) Weigh(st State, g []float64) {
	e.M.Next(st.Ctx, st.Scratch)
	for x := range g {
		if e.Power == 1 {
			g[x] *= st.Scratch[x]
		} else {
			g[x] *= math.Pow(st.Scratch[x], e.Power)
		}
	}
}

func (e Expert) String() string {
	if e.Power == 1 {
		return "expert:" + e.Name
	}
	return fmt.Sprintf("expert:%s:%g", e.Name, e.Power)
}

// Model is a Feynman–Kac transformer model (s_0, {M_t}, {G_t}) in the
// sense of Lew et al. (arXiv 2306.03081, §2): s_0 is the empty generated
// string after Prompt,
//
//	M_t(s_{t-1}+x | s_{t-1}) = norm(LM(·|prompt, s_{t-1})^(1/Temperature))(x),
//	G_t(s_{t-1}, s_{t-1}+x)  = Π_j Potentials[j](s_{t-1}, x),
//
// and the finished set F holds the strings that end with EOS or have T
// tokens (the horizon: a string is cut there and counts as finished; the
// EndWithin potential gives such strings weight 0 instead). A finished
// string is absorbing (M = identity, G = 1). The partition function is
//
//	Z = E_M[Π_{t=1}^{T} G_t(S_{t-1}, S_t)] = Σ_{s ∈ F} M(s)·Π_t G_t(s),
//
// and the posterior P(s) = M(s)·Π_t G_t(s) / Z.
type Model struct {
	Name   string
	LM     sim.Model
	Prompt []int
	EOS, T int
	// Temperature tempers M_t; 0 or 1 leave the model's rows unchanged.
	Temperature float64
	Potentials  []Potential
}

// Validate checks the model's fields.
func (m *Model) Validate() error {
	if m.LM == nil {
		return fmt.Errorf("%w: no language model", ErrBadModel)
	}
	v := m.LM.Vocab()
	switch {
	case m.EOS < 0 || m.EOS >= v:
		return fmt.Errorf("%w: eos = %d; use a token in [0, %d)", ErrBadModel, m.EOS, v)
	case m.T < 1 || m.T > MaxT:
		return fmt.Errorf("%w: max length T = %d; use 1 <= T <= %d", ErrBadModel, m.T, MaxT)
	case m.Temperature < 0 || math.IsNaN(m.Temperature) || math.IsInf(m.Temperature, 0):
		return fmt.Errorf("%w: temperature = %g; use a positive temperature (0 or 1: untempered)", ErrBadModel, m.Temperature)
	}
	for i, x := range m.Prompt {
		if x < 0 || x >= v {
			return fmt.Errorf("%w: prompt token %d is %d; tokens are in [0, %d)", ErrBadModel, i, x, v)
		}
	}
	for _, p := range m.Potentials {
		switch p := p.(type) {
		case Forbid:
			for _, x := range p.S {
				if x < 0 || x >= v {
					return fmt.Errorf("%w: %s: token %d is outside [0, %d)", ErrBadModel, p, x, v)
				}
			}
		case Keyword:
			if p.Tok < 0 || p.Tok >= v {
				return fmt.Errorf("%w: %s: token outside [0, %d)", ErrBadModel, p, v)
			}
		case Length:
			if p.Min < 0 || p.Max < p.Min {
				return fmt.Errorf("%w: %s: use 0 <= min <= max", ErrBadModel, p)
			}
		case Expert:
			if p.M == nil || p.M.Vocab() != v {
				return fmt.Errorf("%w: %s: the expert must share the vocabulary of %d tokens", ErrBadModel, p, v)
			}
			if !(p.Power > 0) || math.IsInf(p.Power, 0) {
				return fmt.Errorf("%w: %s: the power must be a positive number", ErrBadModel, p)
			}
		}
	}
	return nil
}

// Vocab returns the vocabulary size.
func (m *Model) Vocab() int { return m.LM.Vocab() }

// String describes the model.
func (m *Model) String() string {
	var ps []string
	for _, p := range m.Potentials {
		ps = append(ps, p.String())
	}
	s := fmt.Sprintf("%s eos=%d T=%d", m.Name, m.EOS, m.T)
	if m.Temperature != 0 && m.Temperature != 1 {
		s += fmt.Sprintf(" temperature=%g", m.Temperature)
	}
	if len(m.Prompt) > 0 {
		s += " prompt=" + joinInts(m.Prompt)
	}
	if len(ps) > 0 {
		s += " potentials=" + strings.Join(ps, ";")
	}
	return s
}

// kernel writes M_t(·|s) into row and G_t(s, s+·) into g for the
// unfinished string gen (generated part); ctx is scratch for the prompt
// followed by gen, scratch a row of length V. It returns the grown ctx.
func (m *Model) kernel(gen, ctx []int, row, g, scratch []float64) []int {
	ctx = append(append(ctx[:0], m.Prompt...), gen...)
	m.LM.Next(ctx, row)
	if m.Temperature != 0 && m.Temperature != 1 {
		copy(scratch, row)
		sim.Temperature(row, scratch, m.Temperature)
	}
	for x := range g {
		g[x] = 1
	}
	st := State{Gen: gen, Ctx: ctx, EOS: m.EOS, T: m.T, Scratch: scratch}
	for _, p := range m.Potentials {
		p.Weigh(st, g)
	}
	return ctx
}

// ParsePotential parses one potential spec:
//
//	forbid:1,2       no token from {1, 2}
//	end              ends with EOS within T tokens
//	length:2-4       finished length (tokens before EOS) in [2, 4]; length:3 is 3-3
//	keyword:2        the finished string contains token 2
//	expert:q[:0.5]   the pair's draft (q) or target (p) model's likelihood to a power (default 1)
//
// pair supplies the expert models.
func ParsePotential(spec string, pair sim.Pair) (Potential, error) {
	kind, arg, _ := strings.Cut(strings.TrimSpace(spec), ":")
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: potential %q: %s", ErrBadModel, spec, fmt.Sprintf(format, a...))
	}
	switch kind {
	case "forbid":
		xs, err := parseInts(arg)
		if err != nil || len(xs) == 0 {
			return nil, bad("write forbid:TOKEN,TOKEN,...")
		}
		return Forbid{S: xs}, nil
	case "end":
		if arg != "" {
			return nil, bad("end takes no argument")
		}
		return EndWithin{}, nil
	case "length":
		lo, hi, ok := strings.Cut(arg, "-")
		if !ok {
			hi = lo
		}
		a, err1 := strconv.Atoi(strings.TrimSpace(lo))
		b, err2 := strconv.Atoi(strings.TrimSpace(hi))
		if err1 != nil || err2 != nil {
			return nil, bad("write length:MIN-MAX or length:L")
		}
		return Length{Min: a, Max: b}, nil
	case "keyword":
		x, err := strconv.Atoi(strings.TrimSpace(arg))
		if err != nil {
			return nil, bad("write keyword:TOKEN")
		}
		return Keyword{Tok: x}, nil
	case "expert":
		name, pw, hasPower := strings.Cut(arg, ":")
		power := 1.0
		if hasPower {
			f, err := strconv.ParseFloat(pw, 64)
			if err != nil {
				return nil, bad("the power %q is not a number", pw)
			}
			power = f
		}
		switch name {
		case "p":
			return Expert{Name: "p", M: pair.P, Power: power}, nil
		case "q":
			return Expert{Name: "q", M: pair.Q, Power: power}, nil
		}
		return nil, bad("the expert is p (the pair's target) or q (its draft)")
	}
	return nil, bad("kinds: forbid:..., end, length:..., keyword:..., expert:...")
}

func parseInts(s string) ([]int, error) {
	var xs []int
	for _, f := range strings.Split(s, ",") {
		x, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return nil, err
		}
		xs = append(xs, x)
	}
	return xs, nil
}

func joinInts(xs []int) string {
	var b strings.Builder
	for i, x := range xs {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(x))
	}
	return b.String()
}

// ParseTokens parses a comma-separated token list such as "1,2" (empty:
// none).
func ParseTokens(s string) ([]int, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	xs, err := parseInts(s)
	if err != nil {
		return nil, fmt.Errorf("%w: tokens %q: write comma-separated integers such as 1,2", ErrBadModel, s)
	}
	return xs, nil
}

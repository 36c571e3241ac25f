package run

import (
	"fmt"
	"math/rand/v2"

	"github.com/specsim/specsim/sim"
)

// Role names what a random stream is used for.
type Role uint8

// The stream roles.
const (
	// Source picks where a round's rows come from (a pool's context).
	Source Role = iota
	// Draft draws the draft tokens.
	Draft
	// Coins is the verifier's own randomness.
	Coins
	// Continuation draws tokens after the step (the target's continuation
	// of a sequence, say).
	Continuation
	numRoles
)

var roleNames = [numRoles]string{"source", "draft", "coins", "continuation"}

// String returns the role's name: source, draft, coins or continuation.
func (r Role) String() string {
	if r < numRoles {
		return roleNames[r]
	}
	return fmt.Sprintf("Role(%d)", int(r))
}

// Roles lists every role in the order of their constants.
func Roles() []Role { return []Role{Source, Draft, Coins, Continuation} }

// Keys maps a role and a unit to a stream id; make them with Named.
type Keys struct {
	f func(role Role, unit uint64) uint64
}

// Key returns the stream id of role r in unit u.
func (k Keys) Key(r Role, u uint64) uint64 { return k.f(r, u) }

// Named returns the harness's keys for the run called name, further
// identified by keys (a cell's parameters, say): the stream of role r in
// unit u is
//
//	sim.StreamID(name+"/"+r.String(), keys..., u),
//
// so every role has a stream of its own, and two runs share streams only
// when they share name and keys (common random numbers on purpose).
func Named(name string, keys ...uint64) Keys {
	var names [numRoles]string
	for r := range numRoles {
		names[r] = name + "/" + r.String()
	}
	ks := append([]uint64(nil), keys...)
	return Keys{f: func(r Role, u uint64) uint64 {
		// Keys may be called concurrently, so the keys are copied per
		// call, onto the stack for up to 7 of them: a round asks for its
		// streams without allocating.
		var buf [8]uint64
		return sim.StreamID(names[r], append(append(buf[:0], ks...), u)...)
	}}
}

// Streams holds the generators of one unit. A generator is seeded the
// first time its role is asked for in the unit, so roles a loop does not
// use cost nothing. Streams is not safe for concurrent use.
type Streams struct {
	seed  uint64
	keys  Keys
	unit  uint64
	fixed *rand.Rand // every role, when set (Shared)
	live  [numRoles]bool
	ids   [numRoles]uint64
	gens  [numRoles]*sim.Stream
	rngs  [numRoles]*rand.Rand
	extra []extraGen
	epoch uint64 // counts Resets, so extra generators restart on each
}

// NewStreams returns the streams of a run with master seed seed and the
// given keys, positioned at unit 0.
func NewStreams(seed uint64, keys Keys) *Streams {
	return &Streams{seed: seed, keys: keys}
}

// Shared returns streams whose every role is rng itself: for loops that
// draw a whole sequence of rounds from one keyed generator.
func Shared(rng *rand.Rand) *Streams { return &Streams{fixed: rng} }

// Reset moves the streams to unit u: each role's generator restarts from
// its key for u the next time it is asked for.
func (s *Streams) Reset(u uint64) {
	s.unit = u
	s.epoch++
	s.live = [numRoles]bool{}
}

// Rand returns the generator of role r in the current unit.
func (s *Streams) Rand(r Role) *rand.Rand {
	if s.fixed != nil {
		return s.fixed
	}
	if s.live[r] {
		return s.rngs[r]
	}
	id := s.keys.f(r, s.unit)
	for o := range numRoles {
		if s.live[o] && s.ids[o] == id {
			s.live[r], s.ids[r], s.rngs[r] = true, id, s.rngs[o]
			return s.rngs[r]
		}
	}
	if s.gens[r] == nil {
		s.gens[r] = sim.NewStream()
	}
	s.live[r], s.ids[r] = true, id
	s.rngs[r] = s.gens[r].Reset(s.seed, id)
	return s.rngs[r]
}

// coins returns the Coins generator of verifier i: verifier 0 draws from
// Rand(Coins) itself (shared with any role of the same key), every other
// verifier from a generator of its own started at the same key, so all
// verifiers of a round see the same coins (common random numbers).
func (s *Streams) coins(i int) *rand.Rand {
	rng := s.Rand(Coins)
	if i == 0 || s.fixed != nil {
		return rng
	}
	for len(s.extra) < i {
		s.extra = append(s.extra, extraGen{gen: sim.NewStream()})
	}
	e := &s.extra[i-1]
	if e.unit != s.unit || e.epoch != s.epoch || e.rng == nil {
		e.unit, e.epoch = s.unit, s.epoch
		e.rng = e.gen.Reset(s.seed, s.ids[Coins])
	}
	return e.rng
}

// extraGen is the coins generator of a verifier after the first.
type extraGen struct {
	gen         *sim.Stream
	rng         *rand.Rand
	unit, epoch uint64
}

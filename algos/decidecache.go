package algos

import (
	"math"

	"github.com/specsim/specsim/sim"
)

// decideMinV is the least vocabulary whose decisions are kept: below it a
// rule's pass over the row costs about what finding the row does.
const decideMinV = 32

// decided returns decide(), the decision of rule key at a position with
// target row p and draft row q (q zero when the decision reads p alone),
// kept in a rowCache per rule type: the rules whose decision is a pass
// over the vocabulary (an entropy, a divergence, mentored decoding's
// sorted solve) decide once per pool row instead of at every step and
// every law. A kept decision is the one decide returned, so outcomes and
// laws are bit for bit those without the cache. keyBits are the rule's
// parameters' bits (they place the rule's rows in the cache's slots).
// Under a benchmark (sim.Timing) every decision is computed.
func decided[K comparable](c *rowCache[K, decision], key K, keyBits uint64, p, q sim.Row, decide func() decision) decision {
	if p.Len() < decideMinV || sim.Timing() {
		return decide()
	}
	e, slot := c.find(key, keyBits, p, q)
	if e != nil {
		return e.val
	}
	d := decide()
	c.store(slot, key, p, q, d, 0)
	return d
}

// The caches of the rules that keep their decisions.
var (
	mentoredDecisions rowCache[Mentored, decision]
	fuzzyDecisions    rowCache[Fuzzy, decision]
	typicalDecisions  rowCache[Typical, decision]
	medusaDecisions   rowCache[TypicalMedusa, decision]
	argmaxDecisions   rowCache[TypicalArgmax, decision]
)

// bits2 mixes two parameters' bits into a cache key.
func bits2(a, b float64) uint64 { return math.Float64bits(a)*0x9e3779b97f4a7c15 ^ math.Float64bits(b) }

// Package draft is specsim's family of drafters: everything that turns a
// draft model (or a context alone) into the draft a verifier checks.
//
// There are two shapes. A ChainDrafter writes one chain of tokens after a
// context into a sim.Block: Chain (autoregressive from q), Heads
// (Medusa-style heads, one per position) and Lookup (prompt lookup). A
// tree drafter is a sim.Drafter that builds a sim.Tree after a context:
// IID (k chains with replacement), WOR (without replacement), TopK,
// Greedy, Fixed (given candidates) and Dynamic (the EAGLE-2 tree). Each
// drafter is one file whose doc comment cites its paper and gives the
// rule by which tokens or children are chosen. A Policy decides how long a
// chain runs (fixed, conf:τ, oracle).
//
// Every drafter has its own constructor; New builds one from a Config by
// name, for callers that name drafters by string (Names lists them; a new
// drafter file registers itself in init and is then nameable everywhere).
// NewTree builds the tree drafter of a sim.DraftKind. A drafter declares
// the optional fields it reads when it registers (registerBranching for
// Config.Branch), and New refuses a Branch given to one that would ignore
// it, so a flag never goes silently unused.
//
// The round loop (package sim/run) takes drafters through adapters:
// ChainRounds and TreeRounds draft each round after a context the caller
// grows (a generation); run.CycleTrees draws trial t's tree from the t-th
// of several drafters (the contexts of a pool). Package sim/run does not
// import this package.
package draft // import "github.com/specsim/specsim/sim/draft"

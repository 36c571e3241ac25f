// Package external checks speculative-decoding samplers that live outside
// this program — NumPy, PyTorch, Triton or CUDA code in a serving engine —
// with the harness's statistical check. The harness owns the sources, the
// draft randomness, the statistics and the verdict; the implementation
// owns only its sampler. It runs as a child process and answers batches
// over its stdin and stdout.
//
// # Modes
//
// In verify mode the harness samples the drafts and the implementation
// verifies them: given target rows p [B, γ+1, V], draft rows q [B, γ, V]
// and drafts [B, γ] with drafts[b, i] ~ q[b, i], it returns emitted
// [B, γ+1]. In step mode it drafts for itself — from the pool's logits,
// or (protocol 2) from the model the harness ships — and returns what it
// emitted, with its drafts or (protocol 2) without them: the harness then
// judges the emitted tokens alone against the target law given the
// emitted prefix, whatever the sampler's drafting shape (a chain, a tree,
// beams). In tree mode (protocol 2) the harness drafts a token tree per
// row and the implementation returns the tokens of the accepted path and
// its extra token. Rows b of a batch are independent sequences.
//
// # Framing
//
// Every message, in both directions, is one header line — a JSON object
// in UTF-8 ending in '\n' (0x0A) — followed by the arrays its "arrays"
// field names, in that order, each one NumPy .npy frame of format version
// 1.0 (https://numpy.org/doc/stable/reference/generated/numpy.lib.format.html):
//
//	bytes 0-5   0x93 'N' 'U' 'M' 'P' 'Y'
//	byte  6     0x01 (major version)
//	byte  7     0x00 (minor version)
//	bytes 8-9   HLEN, little-endian uint16
//	HLEN bytes  an ASCII Python dict literal, space-padded and ending in
//	            '\n' so that 10 + HLEN is a multiple of 64, e.g.
//	            {'descr': '<f4', 'fortran_order': False, 'shape': (16, 5, 1000), }
//	data        prod(shape) items, C order, little-endian
//
// The harness writes float32 arrays as '<f4', float64 arrays as '<f8' and
// integer arrays as '<i8'. It accepts replies in '<i8' only for tokens (a
// float, bool or narrower integer array is reported as a wrong dtype);
// the reader understands any little-endian integer or float descr so that
// the error names it. No other bytes may appear on the implementation's
// stdout: diagnostics go to stderr (the harness keeps its last 4 KiB and
// quotes the last line in an error).
//
// # Versions
//
// The hello message carries "protocol": the newest version the harness
// speaks (2), and "protocols": every version it speaks ([1, 2]). The
// ready reply's "protocol" names the version the implementation chose;
// a reply without it is version 1. A version-1 implementation gets
// exactly the messages of version 1 (below, without the fields marked
// "protocol 2"); what needs version 2 (tree mode, step mode on a model
// pair, composed batches) is refused with one line naming it.
//
// # Messages (harness → implementation, then the reply)
//
//  1. {"op":"hello","protocol":2,"protocols":[1,2],"mode":"verify"|"step"|"tree",
//     "gamma":γ,"vocab":V,"sampling":{"temperature":T,"top_k":K,"top_p":P,"min_p":M},
//     "source":"pool"|"markov"|"inline","draft":D,"per_row":[...]} —
//     sampling is absent unless sampling flags were given; source, draft
//     (the tree drafter, tree mode) and per_row (the per-row arrays every
//     batch carries, composed batches) are protocol 2. In tree mode γ is
//     the trees' depth. Reply {"op":"ready","protocol":n,
//     "name":"MODULE:FUNCTION","takes_sampling":bool}; when sampling is
//     given the function must take it. An implementation that cannot
//     serve the mode replies {"op":"error","message":...} instead.
//  2. {"op":"pool","contexts":C,"arrays":["p","q"]} with p float32
//     [C, γ+1, V] and q float32 [C, γ, V] — sent once when the source is
//     a pool: probabilities in verify and tree mode, natural logarithms of
//     them in step mode (log 0 = -Inf). Reply {"op":"ok"}.
//  3. (protocol 2) {"op":"model","kind":"markov","order":K,"contexts":S,
//     "arrays":["p","q"]} with p, q float64 [S, V] — sent once in step and
//     tree mode when the source is a Markov model pair: row s is the next-
//     token row of the state s of the last K tokens, s = Σ_j d_j (V+1)^(K-1-j)
//     over the last K tokens d_0..d_{K-1}, a missing token (before the
//     start) being the digit V (sim.Markov.State); probabilities in tree
//     mode, logarithms in step mode. Reply {"op":"ok"}.
//  4. Chain batches (verify and step mode): {"op":"batch","batch":k,
//     "first_step":t,"size":B,"seed":S,"rows":"pool"|"inline"|"model",
//     "coins":"random"|"zero"|"max","arrays":[...]} with arrays ctx int64
//     [B] (rows "pool": row b uses the pool's context ctx[b]), or p, q as
//     in message 2 but with B rows (rows "inline": model pairs in verify
//     mode, and the edge-case batches), or none (rows "model", protocol 2:
//     step mode on a model pair; every row starts from the empty context
//     and drafts from the tables of message 3); then, in verify mode,
//     drafts int64 [B, γ] (-1 beyond a row's draft length); then, in a
//     composed batch (protocol 2), the per-row arrays temperature float64
//     [B], top_k int64 [B], top_p float64 [B], min_p float64 [B] (each
//     row's sampling; temperature 0 is greedy), gamma int64 [B] (each
//     row's draft length) and seed int64 [B] (each row's seed, -1 for an
//     unseeded row). The function gets numpy.random.Generator(PCG64(S)), S
//     being drawn from the keyed stream package check hands the batch's
//     steps, so a run is reproducible; k counts the batches sent (a
//     --seconds budget's pilot batches come first). Coins "zero" and "max"
//     mark the two edge-case batches (16 identical rows each, after the
//     statistical batches): every coin the function takes (the generator's
//     random() and uniform(), Batch.uniforms) is then exactly 0, or the
//     largest value of its dtype below 1 (see Impl.Edge); a client in
//     another language scripts its own coins the same way. Reply {"op":"result","batch":k,
//     "arrays":["emitted"]} in verify mode; in step mode
//     {"op":"result","batch":k,"arrays":["drafts","emitted"]} or
//     (protocol 2) {"op":"result","batch":k,"arrays":["emitted"]}, with
//     drafts int64 [B, γ] (-1 beyond a row's draft length) and emitted
//     int64 [B, γ+1]: row b holds the accepted tokens, then the correction
//     or bonus token, then -1 padding. A row with k leading tokens decodes
//     to sim.Outcome{Accepted: k-1, Next: row[k-1]}.
//  5. (protocol 2) Tree batches (tree mode): {"op":"batch","batch":k,
//     "first_step":t,"size":B,"seed":S,"coins":"random",
//     "rows":"pool"|"markov"|"inline","arrays":["parent","token","draws",
//     "nodes","prow","qrow"(,"p","q")]} with, for N the most nodes of a
//     tree of the batch and K the most draws at a node: parent int64
//     [B, N] (node n's parent; -1 for the root, node 0, and for padding),
//     token int64 [B, N] (the token node n appends; -1 for the root and
//     padding), draws int64 [B, N, K] (node n's children in the order they
//     were drawn; a child drawn twice, as k i.i.d. chains can, appears
//     twice; -1 padding), nodes int64 [B] (each tree's node count), prow
//     int64 [B, N] and qrow int64 [B, N]: the row of a table holding node
//     n's target row p(.|path to n) — the bonus row at a leaf — and the
//     draft row its children were drawn from (-1 where there is none: a
//     leaf). The table is the pool of message 2 flattened to
//     [C·(γ+1), V] and [C·γ, V] (rows "pool": context c, position i is row
//     c·(γ+1)+i, draft row c·γ+i), the tables of message 3 (rows
//     "markov"), or p, q float32 [B·N, V] sent with the batch (rows
//     "inline", another model pair; the harness checks B·N·V·8 bytes
//     against the memory budget first). Reply {"op":"result","batch":k,
//     "arrays":["emitted"]}, emitted int64 [B, γ+1]: the tokens of the
//     accepted path from the root, then the extra token (correction or
//     bonus), then -1 padding; the harness walks the tree to find the node.
//  6. {"op":"close"} — the implementation exits with status 0; no reply.
//
// Instead of a reply the implementation may send
// {"op":"error","batch":k,"message":"..."}; the harness then stops.
//
// # Errors and invalid outcomes
//
// The harness stops at the first protocol failure with one line naming
// the batch (and the step, when a row is at fault): the child exiting or
// closing its stdout, no complete answer within the timeout (the child's
// process group is killed; reads and writes carry deadlines, so nothing
// hangs), a header that is not JSON, arrays other than the ones expected,
// a wrong shape or dtype, a token outside [0, V), -1 padding followed by a
// token, or an all -1 row. A well-formed answer that no correct sampler
// gives is not a protocol failure but an invalid outcome: it is counted
// (invalid_outcomes), shown with examples in the verdict's "outcomes"
// component, and makes the verdict violated. Invalid outcomes are an
// accepted prefix that differs from the drafts sent (or returned): accepted
// tokens were changed; more tokens than a row's draft length allows; in
// tree mode a path that is not in the tree; under a conformance test, a
// returned draft of draft probability 0; and a token of target probability
// 0.
//
// # The check
//
// An Impl is a sim.Stepper (verify and step mode) and a sim.TreeStepper
// (tree mode), so Run hands it to check.Check like any Go rule: the same
// tests, power, --seconds budget, conformance test (RunConfig.Conform: a
// chain rule, or in tree mode a tree rule) and verdict, on one worker in
// batches of Config.Batch = B steps. Blocks of a pool carry their context
// index, which is all a batch ships once the pool's rows were sent; with
// sampling parameters check tests against TransformPool's rows, and with a
// batch composition (Config.Rows) against ComposePool's, while the
// implementation holds the raw rows under the same indices. In step mode
// the Impl writes what the implementation drafted (its drafts, or its
// accepted path when it returned none) into the blocks, with a model
// pair's rows along them, so check judges the emitted tokens. Run then
// drives the edge cases (Impl.Edge, chain modes), the determinism replay
// (Impl.Determinism, composed batches with seeded rows) and folds them and
// the invalid outcomes into the verdict, for 'simulate check --external'.
// The Python side is the package specsim_ext in python/ of this
// repository.
package external // import "github.com/specsim/specsim/external"

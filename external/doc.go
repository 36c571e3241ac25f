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
// [B, γ+1]. In step mode it is given logits instead and samples its own
// drafts, returning them with what it emitted, so bugs in draft sampling
// (a bf16 path, argmax candidates, sampling parameters applied to one
// model only) show. Rows b of a batch are independent sequences.
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
// The harness writes float32 arrays as '<f4' and integer arrays as '<i8'.
// It accepts replies in '<i8' only for tokens (a float, bool or narrower
// integer array is reported as a wrong dtype); the reader understands any
// little-endian integer or float descr so that the error names it. No
// other bytes may appear on the implementation's stdout: diagnostics go
// to stderr (the harness keeps its last 4 KiB and quotes the last line in
// an error).
//
// # Messages (harness → implementation, then the reply)
//
//  1. {"op":"hello","protocol":1,"mode":"verify"|"step","gamma":γ,"vocab":V,
//     "sampling":{"temperature":T,"top_k":K,"top_p":P,"min_p":M}} —
//     sampling is absent unless sampling flags were given. Reply
//     {"op":"ready","name":"MODULE:FUNCTION","takes_sampling":bool}; when
//     sampling is given the function must take it (a fifth argument in
//     verify mode, a fourth in step mode).
//  2. {"op":"pool","contexts":C,"arrays":["p","q"]} with p float32
//     [C, γ+1, V] and q float32 [C, γ, V] — sent once when the source is
//     a pool: probabilities in verify mode, natural logarithms of them in
//     step mode (log 0 = -Inf). Reply {"op":"ok"}.
//  3. {"op":"batch","batch":k,"first_step":t,"size":B,"seed":S,
//     "rows":"pool"|"inline","coins":"random"|"zero"|"max","arrays":[...]}
//     with arrays ctx int64 [B] (rows "pool": row b uses the pool's
//     context ctx[b]) or p, q as in message 2 but with B rows (rows
//     "inline": model pairs, whose rows depend on the drafts, and the
//     edge-case batches), then, in verify mode, drafts int64 [B, γ]. The
//     function gets numpy.random.Generator(PCG64(S)), S being drawn from
//     the keyed stream package check hands the batch's steps
//     (("check/rule", u) for its batch u of Config.Batch steps), so a run
//     is reproducible; k counts the batches sent (a --seconds budget's
//     pilot batches come first). Coins "zero" and "max" mark the two
//     edge-case batches (one row each, after the statistical batches): the
//     generator's
//     random() and uniform() then return exactly 0, or 1 - 2^-53 (see
//     Impl.Edge). Reply {"op":"result","batch":k,"arrays":["emitted"]}
//     in verify mode or {"op":"result","batch":k,"arrays":["drafts",
//     "emitted"]} in step mode, with drafts int64 [B, γ] and emitted
//     int64 [B, γ+1]: row b holds the accepted drafts, then the
//     correction or bonus token, then -1 padding. A row with k leading
//     tokens decodes to sim.Outcome{Accepted: k-1, Next: row[k-1]}.
//  4. {"op":"close"} — the implementation exits with status 0; no reply.
//
// Instead of a reply the implementation may send
// {"op":"error","batch":k,"message":"..."}; the harness then stops.
//
// # Errors
//
// The harness stops at the first protocol failure with one line naming
// the batch (and the step, when a row is at fault): the child exiting or
// closing its stdout, no complete answer within the timeout (the child's
// process group is killed; reads and writes carry deadlines, so nothing
// hangs), a header that is not JSON, arrays other than the ones expected,
// a wrong shape or dtype, a token outside [0, V), -1 padding followed by a
// token, an all -1 row, or an accepted prefix that differs from the drafts
// sent (or, in step mode, returned). A step that emits a token of target
// probability 0 is not a protocol failure but an invalid outcome: it
// makes the verdict "violated".
//
// # The check
//
// An Impl is a check.Stepper (a check.DraftSampler in step mode), so Run
// hands it to check.Check like any Go rule: the same tests, power,
// --seconds budget, conformance test (RunConfig.Conform) and verdict, on
// one worker in batches of Config.Batch = B steps. Blocks of a pool carry
// their context index, which is all a batch ships once the pool's rows
// were sent; with sampling parameters check tests against TransformPool's
// rows while the implementation holds the raw ones under the same
// indices. Run then drives the edge cases (Impl.Edge) and folds them into
// the verdict as check does for Go rules, for 'simulate check
// --external'. The Python side
// is the package specsim_ext in python/ of this repository.
package external // import "github.com/specsim/specsim/external"

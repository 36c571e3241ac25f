// Package data reads and writes logged speculative-decoding runs: one
// parquet row per speculative step holding the draft tokens, the γ draft
// rows q_1..q_γ and the γ+1 target rows p_1..p_{γ+1} of that step, so any
// single-chain acceptance rule can be replayed offline on real (or
// synthetic) model pairs.
//
// The pieces are
//
//   - the schema (LogRow, SchemaVersion; column names and meaning in
//     LogRow's doc comment) with provenance in the file's key/value
//     metadata (Provenance);
//   - a Writer that stores rows dense (float32 lists) or sparse (top-k
//     indices and values plus the tail mass);
//   - a streaming Reader that decodes one row group at a time, validates
//     every step (naming the step and the field) and loads it into a
//     sim.Block of float32 rows, applying the logged sampling transforms
//     (Sampling) to p and q alike when the rows are logits;
//   - tree logs (TreeLogRow, TreeSchemaVersion 2: per node its parent,
//     token, draft and target row, then the accepted path and its extra
//     token), written by TreeWriter and read by TreeReader, which
//     validates each tree's shape; LogVersion tells the two kinds apart;
//   - LogRun and LogPool, which write the speculative run of a synthetic
//     model pair or pool under a given sim.Algorithm (the 'simulate
//     log-synthetic' command).
//
// Replaying rules over a log (exact expectations, sampled outcomes,
// divergences and the binned losslessness test) is experiments.Replay;
// the test itself is check.Binned. data holds no statistics and no
// verifier of its own.
//
// Corrupt or truncated files give errors, never panics: the parquet
// decoder is called behind a recover at the API boundary (FuzzReader
// exercises it).
//
// Of this module, data imports sim only.
package data // import "github.com/specsim/specsim/data"

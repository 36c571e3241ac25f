// Package results stores experiment result tables as Parquet files
// (github.com/parquet-go/parquet-go) with their provenance.
//
// A table is a list of table.Row with dynamic columns: the columns
// are the union of the rows' keys in order of first appearance, each typed
// by its values (DOUBLE for float64, INT64 for int64, BYTE_ARRAY/STRING for
// string, BOOLEAN for bool) and OPTIONAL, so a row that lacks a column
// stores a null there. Floats are stored bit for bit (NaN and ±Inf
// included), so a table read back equals the one written.
//
// Provenance lives in the file's key/value metadata under the specsim.*
// keys (Key* constants): the spec hash and text, the master seed, the
// experiment name, the git revision and Go version of the binary (from
// debug.ReadBuildInfo), the shard i/n, and for one-cell files the cell's
// index and identity. The column order is kept in specsim.columns because
// Parquet groups sort their fields by name.
//
// Files are written atomically: to a temporary file in the destination
// directory, synced, then renamed over the destination, so a reader (or a
// killed writer) never sees half a file.
package results // import "github.com/specsim/specsim/data/results"

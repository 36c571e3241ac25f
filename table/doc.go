// Package table holds result rows and everything that reads or writes them
// without knowing where they came from: the row types (KV, Row, Cell),
// queries over a list of rows (Find, Where, Eq, And, Num, Distinct,
// DistinctS), and the one NaN-safe encoding of rows and values to JSON
// (non-finite floats as the strings "NaN", "+Inf", "-Inf") and CSV (Go's
// shortest round-trip float form, NaN, +Inf, -Inf as such), and the
// aligned plain-text table (PrintRows).
//
// It is a leaf: it imports only the standard library, so the experiments
// that produce rows, the store that keeps them (data/results), the plots
// and the report that read them, and the command-line helpers that print
// them all share it without importing one another.
package table

// Package table holds result rows and everything that reads or writes them
// without knowing where they came from: the row types (KV, Row, Cell),
// queries over a list of rows (Find, Where, Eq, And, Num, Distinct,
// DistinctS), the one NaN-safe encoding of rows and values to JSON
// (non-finite floats as the strings "NaN", "+Inf", "-Inf") and CSV (Go's
// shortest round-trip float form, NaN, +Inf, -Inf as such), the aligned
// plain-text table (PrintRows), and what a report makes of rows:
// formatted tables (Text, rendered as Markdown, LaTeX or CSV) and the
// numbers a paper quotes (Number: a filter and an aggregate, evaluated to
// text).
//
// It is a leaf: it imports only the standard library and internal/escape
// (a cell from input is text in every medium it renders), so the experiments
// that produce rows (and declare the tables and numbers made of them), the
// store that keeps them (data/results), the plots and the report that read
// them, and the command-line helpers that print them all share it without
// importing one another.
package table

// Package report is the main job and everything built from stored
// results: Reproduce (run every main experiment at its default grid as a
// stored, resumable sweep, then the fms scenarios and the log replay),
// Merge (check and merge a sweep's cell files), the bundle of merged
// tables (LoadBundle), the formatted tables (Table1, TokensTable, …) and
// figures, report.md (Build), the paper's numbers and sources (Numbers,
// WritePaper, BuildPDF) and Export (a table as CSV or JSON).
//
// The commands of cmd/report parse flags and call one function here (Job,
// Merge, BuildDir, Paper, ExportFile); their errors are marked with their
// kind (internal/diag), which fixes the exit code, and name the option
// field at fault ("workers = -1; …"), never a flag: cmd/report shows the
// flag instead.
package report

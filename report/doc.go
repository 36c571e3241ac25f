// Package report is the main job and everything built from stored
// results: Reproduce (compute every main-job experiment at its default
// size, as a stored, resumable sweep or whole where the experiment says
// so), Merge (check and merge a sweep's cell files), the bundle of merged
// tables (LoadBundle), the figures, tables and paper numbers each
// experiment declares (Figures, Tables, Numbers: loops over
// experiments.MainJob) with generic figures and a table for any other
// sweep, report.md (Build), the paper's sources (WritePaper, BuildPDF)
// and Export (a table as CSV or JSON).
//
// The commands of cmd/report parse flags and call one function here (Job,
// Merge, BuildDir, Paper, ExportFile); their errors are marked with their
// kind (internal/diag), which fixes the exit code, and name the option
// field at fault ("workers = -1; …"), never a flag: cmd/report shows the
// flag instead.
package report

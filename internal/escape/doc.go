// Package escape makes a string from input (a name in a file's metadata,
// a column value, an external implementation's message) safe to put into
// one medium, with one function per medium, so that data never becomes
// markup or a control sequence:
//
//   - TeX: LaTeX's special characters escaped (a value can never run
//     \openout, \input or \write18), control characters as spaces, and
//     the Greek and math symbols of table headers in math mode.
//   - Markdown: the characters that make Markdown or HTML markup (tags,
//     entities, links, emphasis, code, table pipes) escaped, line breaks
//     as spaces, so a value stays one literal run of text in report.md.
//   - Terminal: control characters (C0, DEL, C1, including ESC, which
//     opens terminal escape sequences), Unicode bidirectional overrides
//     and invalid UTF-8 shown as visible escapes (\x1b, \u202e), so a
//     string printed to a terminal or a log is exactly what it says.
//
// Every writer of those media calls these functions on every string that
// came from input; internal/fsutil's CheckName does the same for file
// names. escape imports only the standard library.
package escape // import "github.com/specsim/specsim/internal/escape"

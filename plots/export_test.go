package plots

// Exported to the external tests (rows_test.go, package plots_test).
var NewPanel = newPanel

// MinSameFigure is minSameFigure, for the external tests.
const MinSameFigure = minSameFigure

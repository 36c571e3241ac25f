// Package lint holds the project's own source checks that go vet and gofmt
// do not make: today, the length of functions (see its test). It has no
// code of its own; its tests read the module's sources.
package lint // import "github.com/specsim/specsim/internal/lint"

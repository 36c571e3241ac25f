// Package pooltest builds the small positional pools that tests of the
// round loop and the check share: rows drawn uniformly (plus a floor, so
// no token has probability 0) from a fixed seed, small enough to reason
// about and to enumerate.
package pooltest // import "github.com/specsim/specsim/internal/pooltest"

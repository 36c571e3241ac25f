// Package longtest gates the long statistical tests of the module.
//
// The default 'go test ./...' runs a reduced size of every statistical
// check (a fixed seed and a tolerance from a stated bound, so it is still a
// real test) and stays under three minutes and 1 GB on a 2-core machine.
// The full sizes run only when the environment variable SPECSIM_LONG is 1:
//
//	SPECSIM_LONG=1 go test ./...
//
// CI (.ci/run) runs the default suite and then the long tests once. An
// environment variable rather than a test flag, because 'go test ./...
// -long' fails in every package that does not define the flag.
package longtest // import "github.com/specsim/specsim/internal/longtest"

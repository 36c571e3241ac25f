//go:build !amd64

package sim

// kernel32 is the block kernel of this machine: the pure-Go one, which
// adds in the amd64 assembly kernel's order (same bits everywhere).
var kernel32 blockKernel = residualBlocks32Go

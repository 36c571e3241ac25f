//go:build !amd64

package sim

// testKernels are the block kernels this machine can run, by name.
func testKernels() map[string]blockKernel {
	return map[string]blockKernel{"go": kernelGo}
}

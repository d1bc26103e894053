//go:build !amd64 || purego

package inflate

const haveAdlerKernel = false

// adlerBlock is adlerBlockGo where there is no assembly kernel.
func adlerBlock(p []byte) (sum, weighted uint64) { return adlerBlockGo(p) }

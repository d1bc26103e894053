package inflate

// Kernel names the kernels in use, for benchmark reports: the DEFLATE
// loops are pure Go; Adler-32 has an AVX2 kernel on amd64 (not with the
// purego build tag).
var Kernel = func() string {
	if haveAdlerKernel {
		return "pure-Go decoding, AVX2 Adler-32"
	}
	return "pure Go"
}()

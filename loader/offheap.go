package loader

import "github.com/gozarr/gozarr/internal/offheap"

// mapBytes returns n bytes of anonymous memory outside the Go heap, so
// that windows held do not raise the garbage collector's heap goal (which
// would let garbage grow as large as the budget beside them); nil when the
// system refuses.
func mapBytes(n int) []byte {
	b, err := offheap.Map(n, false)
	if err != nil {
		return nil
	}
	return b
}

func unmapBytes(b []byte) { offheap.Unmap(b) }

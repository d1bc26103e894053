//go:build !unix

package loader

// mapBytes returns nil: window buffers come from the Go heap.
func mapBytes(int) []byte { return nil }

func unmapBytes([]byte) {}

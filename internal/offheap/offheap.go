// Package offheap maps anonymous memory outside the Go heap, for buffers
// that should not raise the garbage collector's heap goal (the chunk
// cache's frames and arenas, the loader's windows): Map, Unmap, Reserve
// and DropPages. Where the system has no anonymous mappings (not unix),
// Map and Reserve fail and callers use the Go heap.
package offheap

import "errors"

// errUnsupported is Map's and Reserve's error where the system has no
// anonymous mappings.
var errUnsupported = errors.New("offheap: no anonymous mappings on this system")

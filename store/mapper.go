package store

import "context"

// Mapper is implemented by stores whose values can be mapped into memory
// (the filesystem store on Unix): Map returns the whole value of key as
// bytes the kernel pages in from its cache as they are read, without a
// copy, and the function that releases them, to be called once nothing
// reads them any more (calling it again does nothing). The bytes must not
// be read after: a store may unmap them then, or keep them mapped for the
// next Map of the same unchanged file (the filesystem store does, see
// fs.MapCache). A missing key is ErrNotFound.
//
// The bytes are the file's own pages: a writer that replaces a value
// through its store (write and rename, as every store here does) leaves
// them as they were, but one that truncates the file in place makes
// reading past its new end a memory fault, SIGBUS, which crashes a
// program unless the goroutine reading has runtime/debug.SetPanicOnFault
// set and recovers. So readers read mapped bytes only where they can
// turn such a fault into an error: Go code (no cgo) on goroutines with
// SetPanicOnFault, as the pipeline's whole-shard reads do.
type Mapper interface {
	Map(ctx context.Context, key string) (data []byte, unmap func(), err error)
}

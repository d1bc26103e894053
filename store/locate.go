package store

import "context"

// Location is where a value of a store over other stores lives: the bytes
// Range selects of the value at Key in Store, or, when Store is nil, the
// bytes Inline (a value kept in the references themselves). A Location
// names no URL: the store that made it has already resolved and allowed
// its target.
type Location struct {
	Store  Reader    // the store holding the bytes; nil: the value is Inline
	Key    string    // the key of the object in Store
	Range  ByteRange // the value's bytes within that object
	Inline []byte    // the value itself when Store is nil; callers must not modify it
}

// Locator is implemented by stores whose values are byte ranges of values
// in other stores (kerchunk references, Icechunk virtual chunks): Locate
// says where key's value is, without reading it, so that a reader of many
// keys (the pipeline, for the chunks of one read) can group them by the
// object they live in and join neighbouring ranges into one request, as
// it does for the inner chunks of a shard. A key that is not stored is
// ErrNotFound; a key whose reference its store refuses (a target outside
// the allowed prefixes) is that store's error. Implementations are safe
// for concurrent use. Get of the same key reads exactly the bytes Locate
// names.
type Locator interface {
	Locate(ctx context.Context, key string) (Location, error)
}

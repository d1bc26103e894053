package loader

import "github.com/gozarr/gozarr/store"

// CountingStore wraps a store.Reader and counts the bytes and requests it
// answers, and times them: store.CountingStore. Open the loader's arrays
// through it and set Config.Counter to report fetched bytes and fetch
// latency in Stats.
type CountingStore = store.CountingStore

// NewCountingStore returns a CountingStore over r (store.NewCountingStore).
func NewCountingStore(r store.Reader) *CountingStore { return store.NewCountingStore(r) }

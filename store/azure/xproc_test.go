package azure_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/gozarr/gozarr/internal/xproctest"
	"github.com/gozarr/gozarr/store"
)

// TestCrossProcessShardWriters: two processes writing disjoint slabs of
// one sharded array on Azurite, whose shards they share, lose nothing in
// 20 rounds: their read-modify-writes of a shard upload under If-Match the
// ETag read (If-None-Match "*" for a new shard), and the loser of each
// race re-reads and retries.
func TestCrossProcessShardWriters(t *testing.T) {
	e := emulator(t)
	rounds := 20
	if testing.Short() {
		rounds = 2
	}
	base := fmt.Sprintf("gozarr-xproc/%x", rand.Uint32())
	xproctest.Run(t, "TestCrossProcessShardWriters", base, rounds, func(t *testing.T, prefix string) store.Store {
		return e.open(t, e.container, prefix)
	})
}

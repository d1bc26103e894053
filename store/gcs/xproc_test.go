package gcs_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/gozarr/gozarr/internal/xproctest"
	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/gcs"
)

// TestCrossProcessShardWriters: two processes writing disjoint slabs of
// one sharded array on the GCS emulator, whose shards they share, lose
// nothing in 20 rounds: their read-modify-writes of a shard upload under
// a generation-match precondition (ifGenerationMatch=0 for a new shard),
// and the loser of each race re-reads and retries.
func TestCrossProcessShardWriters(t *testing.T) {
	endpoint, bucket := emulator(t)
	rounds := 20
	if testing.Short() {
		rounds = 2
	}
	base := fmt.Sprintf("gozarr-xproc/%x", rand.Uint32())
	xproctest.Run(t, "TestCrossProcessShardWriters", base, rounds, func(t *testing.T, prefix string) store.Store {
		st, err := gcs.Open(context.Background(), bucket, prefix, gcs.WithEndpoint(endpoint), gcs.WithRetry(2, 0))
		if err != nil {
			t.Fatal(err)
		}
		return st
	})
}

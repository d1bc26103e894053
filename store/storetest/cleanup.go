package storetest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"

	"github.com/gozarr/gozarr/store"
)

var prefixSeq atomic.Int64

// UniquePrefix returns a fresh key prefix below base ("base/<random>-<n>"),
// so that tests sharing a bucket of a real server or emulator do not see
// each other's keys.
func UniquePrefix(base string) string {
	return fmt.Sprintf("%s/%x-%d", base, rand.Uint32(), prefixSeq.Add(1))
}

// Cleanup deletes every key st lists when t ends (a test's keys on a
// shared server); failures are logged, not fatal.
func Cleanup(t testing.TB, st store.Store) {
	t.Cleanup(func() {
		ctx := context.Background()
		var keys []string
		for k, err := range st.List(ctx, "") {
			if err != nil {
				t.Logf("cleanup: listing %v: %v", st, err)
				return
			}
			keys = append(keys, k)
		}
		for _, k := range keys {
			if err := st.Delete(ctx, k); err != nil {
				t.Logf("cleanup: %v", err)
			}
		}
	})
}

package pipeline_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gozarr/gozarr/cache"
	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/pipeline"
	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/zarr"
)

// failSet fails every Set of key.
type failSet struct {
	*hookStore
	key string
}

var errSetFailed = errors.New("set refused")

func (f failSet) Set(ctx context.Context, key string, v []byte) error {
	if key == f.key {
		return errSetFailed
	}
	return f.hookStore.Set(ctx, key, v)
}

// TestFailedReadReleasesBudget: a read whose decode fails early (the
// first chunk or inner chunk is damaged) gives every byte it held back to
// the budget it shares with other reads, on every layout, from a local
// store and a remote-like one, with and without the chunk cache; so does
// a write whose store refuses one chunk. Units the decode workers had not
// taken when one of them failed stayed held before: a budget shared by a
// loader's reads shrank with every failed read (5 failed reads of nested
// shards held 58,600 bytes for ever) until reads waited on it for ever.
// No chunk is fetched after the read's context ended (the store does not
// look at it itself).
func TestFailedReadReleasesBudget(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		specs []codecs.Spec
	}{
		{"chunks", zstdSpecs(t)},
		{"shards", shardSpecs(t, []int{16, 16})},
		{"nested shards", nestedSpecs(t)},
	} {
		st, _ := makeArray(t, []int{256, 256}, []int{32, 32}, tc.specs)
		b, err := st.Get(ctx, "a/c/0/0", store.Full())
		if err != nil {
			t.Fatal(err)
		}
		for i := range 8 {
			b[i] ^= 0xff // the zstd frame of the first (inner) chunk
		}
		if err := st.Set(ctx, "a/c/0/0", b); err != nil {
			t.Fatal(err)
		}
		var late atomic.Int64
		hs := &hookStore{Store: st, before: func(ctx context.Context, key string) error {
			if strings.Contains(key, "/c/") && ctx.Err() != nil {
				late.Add(1)
			}
			return nil
		}}
		for _, r := range []store.Reader{hs, getOnly{hs}} {
			for _, cached := range []bool{false, true} {
				name := fmt.Sprintf("%s/%T/cache=%v", tc.name, r, cached)
				budget := pipeline.NewBudget(64 << 20)
				opts := []zarr.Option{zarr.WithBudget(budget), zarr.WithConcurrency(4, 2)}
				if cached {
					opts = append(opts, zarr.WithCache(cache.NewLRU(64<<20)))
				}
				a, err := zarr.OpenArray(ctx, r, "a", opts...)
				if err != nil {
					t.Fatal(err)
				}
				for range 5 {
					if _, _, err := a.ReadBytes(ctx); !errors.Is(err, codecs.ErrCorrupt) {
						t.Fatalf("%s: read: %v, want ErrCorrupt", name, err)
					}
				}
				if n := budget.InUse(); n != 0 {
					t.Errorf("%s: %d bytes held against the budget after the failed reads", name, n)
				}
			}
		}
		if n := late.Load(); n != 0 {
			t.Errorf("%s: %d chunks fetched after the read's context ended", tc.name, n)
		}

		budget := pipeline.NewBudget(64 << 20)
		a, err := zarr.OpenArray(ctx, failSet{hs, "a/c/1/1"}, "a", zarr.WithBudget(budget), zarr.WithConcurrency(4, 2))
		if err != nil {
			t.Fatal(err)
		}
		ones := make([]float32, 256*256)
		for i := range ones {
			ones[i] = 1 // not the fill value: every chunk is stored
		}
		if err := zarr.Write(ctx, a, ones); !errors.Is(err, errSetFailed) {
			t.Fatalf("%s: write: %v, want %v", tc.name, err, errSetFailed)
		}
		if n := budget.InUse(); n != 0 {
			t.Errorf("%s: %d bytes held against the budget after the failed write", tc.name, n)
		}
	}
}

package pipeline_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/zarr"
)

// TestErrorsNameKeysOnce: an error from a corrupt chunk, or inner chunk of
// a shard, names the array, the store key and the inner chunk once each
// (it read `read "t": shard "t/c/0/0": shard "t/c/0/0": inner chunk ...`
// when sharding had a reader of its own), and wraps codecs.ErrCorrupt.
func TestErrorsNameKeysOnce(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		specs []codecs.Spec
		want  string
	}{
		{"chunk", zstdSpecs(t), `read "a": chunk "a/c/0/0": `},
		{"inner chunk", shardSpecs(t, []int{8, 8}), `read "a": shard "a/c/0/0": inner chunk [0 0]: `},
		{"innermost chunk of a nested shard", nestedSpecs(t), `read "a": shard "a/c/0/0": inner shard [0 0]: inner chunk [0 0]: `},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, _ := makeArray(t, []int{16, 16}, []int{16, 16}, tc.specs)
			key := "a/c/0/0"
			b, err := st.Get(ctx, key, store.Full())
			if err != nil {
				t.Fatal(err)
			}
			// Flip bytes in the first chunk's data (zstd frames start at
			// offset 0 of a chunk, and of a shard whose index is at the end).
			for i := 4; i < 12; i++ {
				b[i] ^= 0x5a
			}
			if err := st.Set(ctx, key, b); err != nil {
				t.Fatal(err)
			}
			a, err := zarr.OpenArray(ctx, st, "a")
			if err != nil {
				t.Fatal(err)
			}
			_, _, err = zarr.Read[float32](ctx, a, nd.Range(0, 4), nd.Range(0, 4))
			if !errors.Is(err, codecs.ErrCorrupt) {
				t.Fatalf("err = %v, want ErrCorrupt", err)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, tc.want) || strings.Count(msg, key) != 1 {
				t.Fatalf("error %q: want it to start %q and name %q once", msg, tc.want, key)
			}
		})
	}
}

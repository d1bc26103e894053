package pipeline

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/sharding"
	"github.com/gozarr/gozarr/store/mem"
)

// TestWriteInvalidatesIndexCache: a caller of Write (not only zarr's
// Array) reads what it wrote through a grid whose index cache held the
// shard's index from before the write, for shards and nested shards: the
// pipeline drops the indexes of the shards it replaces.
func TestWriteInvalidatesIndexCache(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct{ name, specs string }{
		{"shards", `[{"name": "sharding_indexed", "configuration": {"chunk_shape": [2, 3], "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "gzip", "configuration": {"level": 1}}],
			"index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]}}]`},
		{"nested shards", nestedSpecs},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := specGrid(t, tc.specs, []int{8, 12}, []int{8, 12}, dtype.TypeUint8)
			g.Key = func(c []int) string { return fmt.Sprint("c", c) }
			g.IndexCache = sharding.NewIndexCache(0)
			st := mem.New()
			all := nd.Selection{{Start: 0, Count: 8, Step: 1}, {Start: 0, Count: 12, Step: 1}}
			part := nd.Selection{{Start: 1, Count: 3, Step: 1}, {Start: 2, Count: 7, Step: 1}}
			data := make([]byte, 96)
			for i := range data {
				data[i] = byte(i % 7) // compresses to other sizes than what follows
			}
			if err := Write(ctx, st, g, all, data, Options{}); err != nil {
				t.Fatal(err)
			}
			got := make([]byte, 96)
			// A partial read: index first, so the index cache holds it.
			if err := Read(ctx, st, g, part, got[:21], Options{}); err != nil {
				t.Fatal(err)
			}
			if st := g.IndexCache.Stats(); st.Entries == 0 {
				t.Fatalf("index cache %+v after a partial read: the test needs a cached index", st)
			}
			patch := make([]byte, 21)
			for i := range patch {
				patch[i] = byte(200 + i)
			}
			if err := Write(ctx, st, g, part, patch, Options{}); err != nil {
				t.Fatal(err)
			}
			if st := g.IndexCache.Stats(); st.Entries != 0 {
				t.Fatalf("index cache %+v after a write of the shard, want no entry", st)
			}
			for r := 1; r < 4; r++ {
				copy(data[r*12+2:r*12+9], patch[(r-1)*7:r*7])
			}
			if err := Read(ctx, st, g, part, got[:21], Options{}); err != nil {
				t.Fatalf("read after write: %v", err)
			}
			if !bytes.Equal(got[:21], patch) {
				t.Fatalf("read %v after writing %v", got[:21], patch)
			}
			if err := Read(ctx, st, g, all, got, Options{}); err != nil || !bytes.Equal(got, data) {
				t.Fatalf("whole read after write: %v\n got %v\nwant %v", err, got, data)
			}
		})
	}
}

package zarr_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/gozarr/gozarr/store/mem"
	"github.com/gozarr/gozarr/zarr"
)

// FuzzConsolidated opens a group whose consolidated metadata is the fuzzed
// document (a v3 zarr.json, or a v2 .zmetadata beside a .zgroup), lists its
// children, opens each and checks the document against the store: no
// panic, hang or unbounded allocation, whatever the document says.
func FuzzConsolidated(f *testing.F) {
	for _, p := range []string{"v3_group.zarr/zarr.json", "v3_stale.zarr/zarr.json", "v2_group.zarr/.zmetadata", "v2_stale.zarr/.zmetadata"} {
		b, err := os.ReadFile(filepath.Join(consDir, p))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(filepath.Base(p) == ".zmetadata", b)
	}
	f.Add(false, []byte(`{"zarr_format":3,"node_type":"group","consolidated_metadata":{"kind":"inline","metadata":{"a/../b":{}}}}`))
	f.Add(true, []byte(`{"metadata":{".zgroup":{"zarr_format":2},"x/.zarray":{"shape":[1],"chunks":[1],"dtype":"<i4","zarr_format":2}},"zarr_consolidated_format":1}`))
	f.Fuzz(func(t *testing.T, v2 bool, doc []byte) {
		ctx := context.Background()
		st := mem.New()
		key := "g/zarr.json"
		if v2 {
			key = "g/.zmetadata"
			_ = st.Set(ctx, "g/.zgroup", []byte(`{"zarr_format": 2}`))
		}
		_ = st.Set(ctx, key, doc)
		g, err := zarr.OpenGroup(ctx, st, "g", zarr.WithMaxMetadataBytes(1<<16))
		if err != nil {
			return
		}
		kids, err := g.Children(ctx)
		if err != nil {
			return
		}
		for _, k := range kids {
			if k.Type == zarr.NodeArray {
				if a, err := g.OpenArray(ctx, k.Name, zarr.WithMaxReadBytes(1<<12), zarr.WithMaxChunkBytes(1<<20)); err == nil {
					_, _, _ = a.ReadBytes(ctx)
				}
			} else if sub, err := g.OpenGroup(ctx, k.Name); err == nil {
				_, _ = sub.Children(ctx)
			}
		}
		_ = g.VerifyConsolidated(ctx)
	})
}

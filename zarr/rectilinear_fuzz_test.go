package zarr

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/store/mem"
)

// FuzzRectilinearGrid parses rectilinear chunk_grid configurations over a
// shape: a parse either fails with a metadata error or gives a grid whose
// edges cover the shape, that writes back to the same grid, and whose
// arrays read a few elements (all fill) without error.
func FuzzRectilinearGrid(f *testing.F) {
	for _, name := range []string{"r2d_int32", "r3d_uint16_partial", "r1d_f64_runs", "r2d_sharded", "r2d_overhang_u8"} {
		doc, err := os.ReadFile(filepath.Join("../testdata/rectilinear", name+".zarr", "zarr.json"))
		if err == nil {
			f.Add(doc)
		}
	}
	f.Add([]byte(`{"zarr_format":3,"node_type":"array","shape":[6,6,6,6,6],"data_type":"uint8","chunk_grid":{"name":"rectilinear","configuration":{"kind":"inline","chunk_shapes":[4,[1,2,3],[[4,2]],[[1,3],3],[4,4,4]]}},"chunk_key_encoding":{"name":"default"},"fill_value":0,"codecs":[{"name":"bytes"}]}`))
	f.Add([]byte(`{"zarr_format":3,"node_type":"array","shape":[1000000000],"data_type":"uint8","chunk_grid":{"name":"rectilinear","configuration":{"kind":"inline","chunk_shapes":[[[1,1000000000]]]}},"chunk_key_encoding":{"name":"default"},"fill_value":0,"codecs":[{"name":"bytes"}]}`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		m, err := ParseArrayMetadata(doc)
		if parseFailed(t, err) || m.Rectilinear == nil {
			return
		}
		edges, err := m.Rectilinear.Edges(m.Shape)
		if err != nil {
			t.Fatalf("validated grid does not resolve: %v", err)
		}
		for d, e := range edges {
			if n := m.Shape[d]; n > 0 {
				if c, l := e.Locate(n - 1); c != e.NumChunks()-1 || l < 0 {
					t.Fatalf("last element of dimension %d in chunk %d of %d", d, c, e.NumChunks())
				}
			}
		}
		out, err := m.Marshal()
		if err != nil {
			t.Fatalf("marshal: %v", err)
		}
		m2, err := ParseArrayMetadata(out)
		if err != nil {
			t.Fatalf("re-parse: %v\n%s", err, out)
		}
		a, _ := json.Marshal(m.Rectilinear)
		b, _ := json.Marshal(m2.Rectilinear)
		if string(a) != string(b) {
			t.Fatalf("grid %s written back as %s", a, b)
		}
		// Read the last element and a small box from an empty store.
		s := mem.New()
		ctx := context.Background()
		if err := s.Set(ctx, "a/zarr.json", out); err != nil {
			t.Fatal(err)
		}
		arr, err := OpenArray(ctx, s, "a", WithMaxChunkBytes(1<<20))
		if err != nil {
			return // chunks over the limit, unknown codecs
		}
		items := make([]nd.Item, len(m.Shape))
		for d, n := range m.Shape {
			items[d] = nd.Range(max(0, n-2), n)
		}
		if _, _, err := arr.ReadBytes(ctx, items...); err != nil {
			t.Fatalf("read %v: %v", items, err)
		}
	})
}

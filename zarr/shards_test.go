package zarr_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/store/fs"
	"github.com/gozarr/gozarr/zarr"
)

// gridAndCodecs returns the chunk_grid and codecs of a zarr.json, the
// parts that say what the chunks and the shards are.
func gridAndCodecs(t *testing.T, doc []byte) (grid, codecs string) {
	t.Helper()
	var m struct {
		ChunkGrid json.RawMessage `json:"chunk_grid"`
		Codecs    json.RawMessage `json:"codecs"`
	}
	if err := json.Unmarshal(doc, &m); err != nil {
		t.Fatal(err)
	}
	compact := func(raw json.RawMessage) string {
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(v)
		return string(b)
	}
	return compact(m.ChunkGrid), compact(m.Codecs)
}

// TestShardsAsZarrPython (trial F24): NewArrayMetadata's chunks are the
// read chunks and Shards the write units, as zarr-python's
// create_array(chunks=..., shards=...): the metadata built equals the one
// zarr-python wrote for chunks (8, 7) in shards (24, 21), and
// (rectilinear) chunks (2, 2) in shards of edges [4 8] × [6 4]; Chunks and
// Shards of the arrays zarr-python wrote say what its Array.chunks and
// Array.shards say.
func TestShardsAsZarrPython(t *testing.T) {
	zs, err := codecs.NewZstd(3, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		dir, name      string
		shape          []int
		dt             dtype.DataType
		chunks, shards []int
		opts           []zarr.MetadataOption
	}{
		{"refdata", "v3_shard_end_edges.zarr", []int{54, 40}, dtype.TypeFloat32, []int{8, 7}, []int{24, 21},
			[]zarr.MetadataOption{zarr.Shards(24, 21), zarr.Compress(zs)}},
		{"rectilinear", "r2d_sharded.zarr", []int{12, 10}, dtype.TypeInt16, []int{2, 2}, []int{8, 6},
			[]zarr.MetadataOption{zarr.RectilinearShards([]int{4, 8}, []int{6, 4}), zarr.FillValue(-1), zarr.Compress(zs)}},
	} {
		dir := filepath.Join("..", "testdata", c.dir)
		ref, err := os.ReadFile(filepath.Join(dir, c.name, "zarr.json"))
		if err != nil {
			t.Fatal(err)
		}
		meta, err := zarr.NewArrayMetadata(c.shape, c.dt, c.chunks, c.opts...)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		built, err := meta.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		wg, wc := gridAndCodecs(t, ref)
		if g, cs := gridAndCodecs(t, built); g != wg || cs != wc {
			t.Errorf("%s: built chunk_grid %s codecs %s,\nzarr-python wrote %s %s", c.name, g, cs, wg, wc)
		}
		st, err := fs.New(dir)
		if err != nil {
			t.Fatal(err)
		}
		a, err := zarr.OpenArray(context.Background(), st, c.name)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(a.Chunks(), c.chunks) || !slices.Equal(a.Shards(), c.shards) {
			t.Errorf("%s: Chunks %v Shards %v, want %v %v", c.name, a.Chunks(), a.Shards(), c.chunks, c.shards)
		}
		if w, d := a.Units(); !slices.Equal(w, c.shards) || !slices.Equal(d, c.chunks) {
			t.Errorf("%s: Units %v %v, want %v %v", c.name, w, d, c.shards, c.chunks)
		}
	}
}

// TestChunksNotSharded: an array that is not sharded has Chunks, the
// write and read unit, and no Shards (zarr-python's Array.shards is None).
func TestChunksNotSharded(t *testing.T) {
	meta, err := zarr.NewArrayMetadata([]int{10, 12}, dtype.TypeUint8, []int{4, 6})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(meta.ChunkShape, []int{4, 6}) {
		t.Errorf("chunk grid %v", meta.ChunkShape)
	}
	st, err := fs.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	a, err := zarr.CreateArray(context.Background(), st, "a", meta)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(a.Chunks(), []int{4, 6}) || a.Shards() != nil {
		t.Errorf("Chunks %v Shards %v, want [4 6] and nil", a.Chunks(), a.Shards())
	}
}

// TestShardsRefusesWhatReadsWrong: shards without a chunk shape, two grids
// (Shards with a rectilinear grid), and a chunk shape beside
// RectilinearChunks are refused rather than guessed at.
func TestShardsRefusesWhatReadsWrong(t *testing.T) {
	for name, build := range map[string]func() (*zarr.ArrayMetadata, error){
		"shards without chunks": func() (*zarr.ArrayMetadata, error) {
			return zarr.NewArrayMetadata([]int{8}, dtype.TypeUint8, nil, zarr.Shards(4))
		},
		"shards and a rectilinear grid": func() (*zarr.ArrayMetadata, error) {
			return zarr.NewArrayMetadata([]int{8}, dtype.TypeUint8, []int{2}, zarr.Shards(4), zarr.RectilinearShards([]int{4, 4}))
		},
		"chunks beside rectilinear chunks": func() (*zarr.ArrayMetadata, error) {
			return zarr.NewArrayMetadata([]int{8}, dtype.TypeUint8, []int{2}, zarr.RectilinearChunks([]int{4, 4}))
		},
	} {
		if _, err := build(); !errors.Is(err, zarr.ErrInvalidMetadata) {
			t.Errorf("%s: %v, want ErrInvalidMetadata", name, err)
		}
	}
}

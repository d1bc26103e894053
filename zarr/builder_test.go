package zarr_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/store/mem"
	"github.com/gozarr/gozarr/zarr"
)

// TestNewArrayMetadata: the builder writes the codec lists zarr-python
// writes for the same choices, refuses impossible ones, and what it builds
// round-trips data.
func TestNewArrayMetadata(t *testing.T) {
	zs, err := codecs.NewZstd(1, false)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := codecs.NewTranspose([]int{1, 0})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		opts   []zarr.MetadataOption
		codec  string // the codecs JSON must contain this
		err    error
		chunks []int // default 4×6
	}{
		{"plain", nil, `[{"name":"bytes","configuration":{"endian":"little"}}]`, nil, nil},
		{"zstd", []zarr.MetadataOption{zarr.Compress(zs)}, `{"name":"zstd","configuration":{"level":1,"checksum":false}}`, nil, nil},
		{"big endian, transposed", []zarr.MetadataOption{zarr.BigEndian(), zarr.Filter(tr)}, `{"name":"transpose","configuration":{"order":[1,0]}},{"name":"bytes","configuration":{"endian":"big"}}`, nil, nil},
		{"sharded", []zarr.MetadataOption{zarr.Shards(4, 6), zarr.Compress(zs)}, `"index_codecs":[{"name":"bytes","configuration":{"endian":"little"}},{"name":"crc32c"}],"index_location":"end"`, nil, []int{2, 3}},
		{"sharded, index at start", []zarr.MetadataOption{zarr.Shards(4, 6), zarr.IndexAtStart()}, `"index_location":"start"`, nil, []int{2, 3}},
		{"chunks that do not divide the shard", []zarr.MetadataOption{zarr.Shards(4, 6)}, "", codecs.ErrInvalidConfig, []int{3, 3}},
		{"a nil compressor", []zarr.MetadataOption{zarr.Compress(nil)}, "", zarr.ErrInvalidMetadata, nil},
		{"a fill value of the wrong size", []zarr.MetadataOption{zarr.Fill([]byte{1})}, "", zarr.ErrInvalidMetadata, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			chunks := tc.chunks
			if chunks == nil {
				chunks = []int{4, 6}
			}
			meta, err := zarr.NewArrayMetadata([]int{10, 12}, dtype.TypeUint16, chunks, tc.opts...)
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("err %v, want %v", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			js, _ := json.Marshal(meta.Codecs)
			if !strings.Contains(string(js), tc.codec) {
				t.Fatalf("codecs %s, want them to contain %s", js, tc.codec)
			}
			ctx := context.Background()
			a, err := zarr.CreateArray(ctx, mem.New(), "a", meta)
			if err != nil {
				t.Fatal(err)
			}
			vals := make([]uint16, 120)
			for i := range vals {
				vals[i] = uint16(i*7 + 1)
			}
			if err := zarr.Write(ctx, a, vals); err != nil {
				t.Fatal(err)
			}
			got, _, err := zarr.Read[uint16](ctx, a)
			if err != nil {
				t.Fatal(err)
			}
			for i := range vals {
				if got[i] != vals[i] {
					t.Fatalf("element %d = %d, want %d", i, got[i], vals[i])
				}
			}
		})
	}
}

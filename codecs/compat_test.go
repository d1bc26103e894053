package codecs_test

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/internal/npy"
	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/store/fs"
	"github.com/gozarr/gozarr/zarr"
)

// compatCases are the arrays of testdata/compat (made by gen.py there with
// zarr-python 3.4.1 and numcodecs 0.17): data other writers store that
// zarr-python reads, with the values it reads as <name>.npy.
var compatCases = []struct {
	name string
	// encodeErr is the error encoding a chunk through the array's chain
	// gives (nil: encoding round-trips).
	encodeErr error
	lossy     bool // encoding does not give back the stored values exactly
}{
	// Finding 12: Blosc frames followed by 16 bytes (z5).
	{name: "v2_blosc_z5_trailing"},
	// Finding 13: numcodecs.delta before "bytes" (zarr-python 3 filters).
	{name: "v3_numcodecs_delta_i4_i2"},
	{name: "v3_numcodecs_delta_int64_2d"},
	{name: "v3_numcodecs_delta_f8_f4", lossy: true},
	{name: "v3_numcodecs_delta_sharded"},
	// Finding 16: levels out of the encoders' range read; writing is refused.
	{name: "v2_gzip_level_m1", encodeErr: codecs.ErrInvalidConfig},
	{name: "v2_zstd_level_100", encodeErr: codecs.ErrInvalidConfig},
	{name: "v2_blosc_clevel_10", encodeErr: codecs.ErrInvalidConfig},
	{name: "v2_zlib_level_10", encodeErr: codecs.ErrInvalidConfig},
}

// TestCompatFixtures reads every array of testdata/compat through package
// zarr and compares it with what zarr-python reads, then encodes its first
// chunk through the array's chain: it round-trips, or, for levels out of
// range, fails with ErrInvalidConfig (as Chain.CheckEncode says up front).
func TestCompatFixtures(t *testing.T) {
	ctx := context.Background()
	st, err := fs.New(filepath.Join("testdata", "compat"), fs.ReadOnly())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range compatCases {
		t.Run(tc.name, func(t *testing.T) {
			want, err := npy.ReadFile(filepath.Join("testdata", "compat", tc.name+".npy"))
			if err != nil {
				t.Fatal(err)
			}
			a, err := zarr.OpenArray(ctx, st, tc.name+".zarr")
			if err != nil {
				t.Fatalf("open: %v", err)
			}
			got, shape, err := a.ReadBytes(ctx)
			if err != nil {
				t.Fatalf("read: %v", err)
			}
			if !equalInts(shape, want.Shape) || !bytes.Equal(got, want.Data) {
				t.Fatalf("read %v % x\nwant %v % x", shape, head(got), want.Shape, head(want.Data))
			}
			chain := a.Chain()
			if err := chain.CheckEncode(); !errors.Is(err, tc.encodeErr) || (err == nil) != (tc.encodeErr == nil) {
				t.Fatalf("CheckEncode: %v, want %v", err, tc.encodeErr)
			}
			chunk, _, err := a.ReadBytes(ctx, chunkItems(a.Metadata().ChunkShape)...)
			if err != nil {
				t.Fatal(err)
			}
			enc, err := chain.Encode(nil, chunk)
			if tc.encodeErr != nil {
				if !errors.Is(err, tc.encodeErr) {
					t.Fatalf("encode: %v, want %v", err, tc.encodeErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("encode: %v", err)
			}
			dec := make([]byte, len(chunk))
			if err := chain.Decode(dec, enc); err != nil {
				t.Fatalf("decode of our encoding: %v", err)
			}
			if !tc.lossy && !bytes.Equal(dec, chunk) {
				t.Fatalf("round trip % x\nwant % x", head(dec), head(chunk))
			}
		})
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// chunkItems selects the first chunk of an array.
func chunkItems(chunk []int) []nd.Item {
	items := make([]nd.Item, len(chunk))
	for i, c := range chunk {
		items[i] = nd.Range(0, c)
	}
	return items
}

func head(b []byte) []byte { return b[:min(len(b), 48)] }

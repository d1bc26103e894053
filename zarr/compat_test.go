package zarr_test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/gozarr/gozarr/internal/npy"
	"github.com/gozarr/gozarr/store/fs"
	"github.com/gozarr/gozarr/zarr"
)

// compatDir holds v2 arrays written by zarr-python (and one edited as
// zarr-python 2 left it), made by testdata/compat/make_compat.py.
const compatDir = "../testdata/compat"

// TestCompatFixtures reads the v2 compatibility fixtures of issue 11 and
// compares every value with the .npy beside them: raw types wider than a
// byte (finding 14), the fill values of "S" dtypes zarr-python writes or
// wrote (finding 15) and numcodecs' crc32c checksum (finding 17), whose
// codec chain is pinned too.
func TestCompatFixtures(t *testing.T) {
	ctx := context.Background()
	st, err := fs.New(compatDir, fs.ReadOnly())
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, dtype string
		codecs      []string // v3 codec names of the translated chain
	}{
		{"v2_S5", "null_terminated_bytes", []string{"bytes"}},
		{"v2_V8", "r64", []string{"bytes"}},
		{"v2_S7_fill_empty", "null_terminated_bytes", []string{"bytes"}},
		{"v2_S3_fill_short", "null_terminated_bytes", []string{"bytes"}},
		{"v2_S1_fill_0", "null_terminated_bytes", []string{"bytes"}},
		{"v2_U3_fill_0", "fixed_length_utf32", []string{"bytes"}},
		{"v2_crc32c", "int16", []string{"bytes", "crc32c"}},
		{"v2_crc32c_start", "int16", []string{"bytes", "numcodecs.crc32c"}},
		{"v2_crc32c_end_filter", "int32", []string{"bytes", "crc32c", "numcodecs.zlib"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a, err := zarr.OpenArray(ctx, st, c.name+".zarr")
			if err != nil {
				t.Fatal(err)
			}
			m := a.Metadata()
			var names []string
			for _, s := range m.Codecs {
				names = append(names, s.Name)
			}
			if m.DataType.Name() != c.dtype || !slices.Equal(names, c.codecs) {
				t.Errorf("data type %s, codecs %v; want %s, %v", m.DataType, names, c.dtype, c.codecs)
			}
			got, shape, err := a.ReadBytes(ctx)
			if err != nil {
				t.Fatal(err)
			}
			want, err := npy.ReadFile(filepath.Join(compatDir, c.name+".npy"))
			if err != nil {
				t.Fatal(err)
			}
			if want.Descr[0] == '>' { // gozarr returns little-endian values
				n := m.DataType.Size()
				for i := 0; i+n <= len(want.Data); i += n {
					slices.Reverse(want.Data[i : i+n])
				}
			}
			if !slices.Equal(shape, want.Shape) || string(got) != string(want.Data) {
				t.Errorf("read %v %x\nwant %v %x", shape, got, want.Shape, want.Data)
			}
		})
	}
}

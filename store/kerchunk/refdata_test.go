package kerchunk_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/gozarr/gozarr/store/fs"
	"github.com/gozarr/gozarr/store/internal/arraytest"
	"github.com/gozarr/gozarr/store/kerchunk"
)

// fixtures is the directory of the HDF5 / NetCDF-4 files, their kerchunk
// references and h5py's values (testdata/virtual/make_virtual.py).
const fixtures = "../../testdata/virtual"

// openFixture opens the references file name of the fixtures through a
// filesystem store of their directory.
func openFixture(t testing.TB, name string, opts ...kerchunk.Option) *kerchunk.Store {
	t.Helper()
	st, err := fs.New(fixtures, fs.ReadOnly())
	if err != nil {
		t.Fatal(err)
	}
	ks, err := kerchunk.Open(context.Background(), st, name, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return ks
}

// checkArray reads the whole array at path of ks and compares it with
// h5py's values in want.npy.
func checkArray(t *testing.T, ks *kerchunk.Store, path, want string) {
	t.Helper()
	arraytest.CheckNpy(t, ks, path, filepath.Join(fixtures, want+".npy"))
}

// TestFixtures reads every dataset of the fixtures through their
// references and compares with h5py.
func TestFixtures(t *testing.T) {
	if _, err := os.Stat(filepath.Join(fixtures, "filters.json")); err != nil {
		t.Fatalf("fixtures missing: %v", err)
	}
	ks := openFixture(t, "filters.json")
	for _, name := range []string{"zlib_shuffle", "raw_be", "fletcher", "packed", "sparse", "contiguous", "compact", "lzf", "lz4", "lz4_blocks", "bitshuffle_lz4", "bitshuffle_zstd", "bitshuffle"} {
		t.Run(name, func(t *testing.T) { checkArray(t, ks, name, name) })
	}
	for _, refs := range []string{"gen_v0.json", "gen_v1.json"} {
		t.Run(refs, func(t *testing.T) { checkArray(t, openFixture(t, refs), "grid", "grid") })
	}
	t.Run("cf.json", func(t *testing.T) { checkArray(t, openFixture(t, "cf.json"), "temp", "temp") })
	// References written by kerchunk itself (kerchunk.hdf.SingleHdf5ToZarr,
	// testdata/virtual/make_kerchunk.py).
	t.Run("kerchunk_cf.json", func(t *testing.T) { checkArray(t, openFixture(t, "kerchunk_cf.json"), "temp", "temp") })
	ksub := openFixture(t, "kerchunk_sub.json")
	for _, name := range []string{"zlib_shuffle", "raw_be", "sparse"} {
		t.Run("kerchunk_sub.json/"+name, func(t *testing.T) { checkArray(t, ksub, name, name) })
	}
}

// Package arraytest holds the steps the tests of the reference and
// repository stores (store/icechunk, store/kerchunk and its Parquet module,
// store/virtual) repeat: create, write, open and read a Zarr array through
// a store, list a store's keys, and compare an array with the values a
// reference implementation saved as .npy. Every step fails its test (with
// the path named) rather than return an error.
package arraytest

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/internal/npy"
	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/zarr"
)

// Must returns a check of a call's results: it ends the test on the
// error, else returns the value: st := arraytest.Must(fs.New(dir))(t).
func Must[T any](v T, err error) func(t testing.TB) T {
	return func(t testing.TB) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

// AddFiles adds the files of dir named to f's seed corpus.
func AddFiles(f *testing.F, dir string, names ...string) {
	f.Helper()
	for _, name := range names {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
}

// Create creates an array at path of st with the shape, data type, chunk
// shape and metadata options given.
func Create(t testing.TB, st store.Store, path string, shape []int, dt dtype.DataType, chunks []int, opts ...zarr.MetadataOption) *zarr.Array {
	t.Helper()
	meta, err := zarr.NewArrayMetadata(shape, dt, chunks, opts...)
	if err != nil {
		t.Fatal(err)
	}
	a, err := zarr.CreateArray(context.Background(), st, path, meta)
	if err != nil {
		t.Fatalf("create %s: %v", path, err)
	}
	return a
}

// Write writes data into a (the selection items, or all of it).
func Write(t testing.TB, a *zarr.Array, data []byte, items ...nd.Item) {
	t.Helper()
	if err := a.WriteBytes(context.Background(), data, items...); err != nil {
		t.Fatal(err)
	}
}

// Open opens the array at path of st.
func Open(t testing.TB, st store.Reader, path string) *zarr.Array {
	t.Helper()
	a, err := zarr.OpenArray(context.Background(), st, path)
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	return a
}

// Read opens the array at path of st and reads the selection items (or all
// of it).
func Read(t testing.TB, st store.Reader, path string, items ...nd.Item) []byte {
	t.Helper()
	b, _, err := Open(t, st, path).ReadBytes(context.Background(), items...)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	return b
}

// Ramp returns n bytes counting by step from 0 (byte i is i*step, modulo
// 256): test data whose every position differs from its neighbours.
func Ramp(n, step int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i * step)
	}
	return b
}

// Keys lists l's keys under prefix, in the order List yields them.
func Keys(t testing.TB, l store.Lister, prefix string) []string {
	t.Helper()
	var keys []string
	for k, err := range l.List(context.Background(), prefix) {
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k)
	}
	return keys
}

// CheckNpy reads the whole array at path of st and compares its shape and
// values with the .npy file npyFile (big-endian .npy values are compared
// in little-endian order, which ReadBytes gives on the platforms CI runs). A difference or a read
// error fails t and returns false; an unreadable npyFile ends the test.
func CheckNpy(t testing.TB, st store.Reader, path, npyFile string) bool {
	t.Helper()
	ctx := context.Background()
	a, err := zarr.OpenArray(ctx, st, path)
	if err != nil {
		t.Errorf("%s: %v", path, err)
		return false
	}
	got, shape, err := a.ReadBytes(ctx)
	if err != nil {
		t.Errorf("%s: %v", path, err)
		return false
	}
	want, err := npy.ReadFile(npyFile)
	if err != nil {
		t.Fatal(err)
	}
	values := want.Data
	if want.Descr[0] == '>' {
		values = slices.Clone(values)
		n, err := npy.ItemSize(want.Descr)
		if err != nil {
			t.Fatal(err)
		}
		if want.Descr[1] == 'c' {
			n /= 2 // a complex number's two parts are swapped apart
		}
		for i := 0; i+n <= len(values); i += n {
			slices.Reverse(values[i : i+n])
		}
	}
	if !slices.Equal(shape, want.Shape) {
		t.Errorf("%s: shape %v, want %v (%s)", path, shape, want.Shape, npyFile)
		return false
	}
	if !bytes.Equal(got, values) {
		t.Errorf("%s: values differ from %s (%d bytes, want %d)\n got %x\nwant %x", path, npyFile, len(got), len(values), clip(got), clip(values))
		return false
	}
	return true
}

func clip(b []byte) []byte { return b[:min(len(b), 64)] }

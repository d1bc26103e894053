package parquet_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gozarr/gozarr/hdf5"
	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/fs"
	"github.com/gozarr/gozarr/store/internal/arraytest"
	"github.com/gozarr/gozarr/store/kerchunk"
	"github.com/gozarr/gozarr/store/kerchunk/parquet"
	"github.com/gozarr/gozarr/store/mem"
	"github.com/gozarr/gozarr/store/virtual"
	"github.com/gozarr/gozarr/zarr"
)

// refsOf virtualizes an HDF5 file of the fixtures.
func refsOf(t *testing.T, name string) (*hdf5.Refs, string) {
	t.Helper()
	ctx := context.Background()
	abs, err := filepath.Abs(filepath.Join(fixtures, name))
	if err != nil {
		t.Fatal(err)
	}
	st, err := fs.New(filepath.Dir(abs), fs.ReadOnly())
	if err != nil {
		t.Fatal(err)
	}
	f, err := hdf5.Open(ctx, st, filepath.Base(abs))
	if err != nil {
		t.Fatal(err)
	}
	refs, err := hdf5.References(ctx, f, hdf5.RefsOptions{URL: abs, SkipUnsupported: true})
	if err != nil {
		t.Fatal(err)
	}
	return refs, abs
}

// writeAndOpen writes refs (of the file name) as Parquet references with
// recordSize rows per refs file into a memory store and opens them, the
// file at abs allowed.
func writeAndOpen(t *testing.T, name string, refs map[string]any, recordSize int, abs string) *parquet.Store {
	t.Helper()
	ctx := context.Background()
	m := mem.New()
	if err := parquet.Write(ctx, m, "refs.parq/", refs, recordSize); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	ps, err := parquet.Open(ctx, m, "refs.parq/", parquet.WithResolverOptions(virtual.AllowFile(abs)))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return ps
}

// readOnly returns dir's absolute path and a read-only store over it.
func readOnly(t *testing.T, dir string) (string, *fs.Store) {
	t.Helper()
	return arraytest.Must(filepath.Abs(dir))(t), arraytest.Must(fs.New(dir, fs.ReadOnly()))(t)
}

// TestWriteReadsBack: references gozarr makes, written as Parquet (record
// size 3: arrays span several files) and read back, give every array the
// values the same references give as JSON (which TestFixtures and the
// hdf5 tests check against h5py).
func TestWriteReadsBack(t *testing.T) {
	ctx := context.Background()
	for _, name := range []string{"filters.h5", "cf.nc", "gen.h5"} {
		refs, abs := refsOf(t, name)
		ps := writeAndOpen(t, name, refs.Refs, 3, abs)
		var doc bytes.Buffer
		if err := refs.WriteJSON(&doc); err != nil {
			t.Fatal(err)
		}
		jm := mem.New()
		jm.Set(ctx, "refs.json", doc.Bytes())
		js, err := kerchunk.Open(ctx, jm, "refs.json", kerchunk.WithResolverOptions(virtual.AllowFile(abs)))
		if err != nil {
			t.Fatal(err)
		}
		arrays := 0
		for _, k := range js.Keys() {
			p, ok := strings.CutSuffix(k, "/.zarray")
			if !ok {
				continue
			}
			want := readAll(t, js, p)
			got := readAll(t, ps, p)
			if !bytes.Equal(got, want) {
				t.Errorf("%s %s: Parquet references read %d bytes differing from the JSON's %d", name, p, len(got), len(want))
			}
			arrays++
		}
		if arrays == 0 {
			t.Errorf("%s: %d arrays", name, arrays)
		}
		t.Logf("%s: %d arrays equal through Parquet and JSON", name, arrays)
		// fsspec (kerchunk's reader) in the reference chroot reads them too.
		checkWithFsspec(t, refs.Refs, abs)
	}
}

func readAll(t *testing.T, st store.Reader, p string) []byte {
	t.Helper()
	a, err := zarr.OpenArray(context.Background(), st, p)
	if err != nil {
		t.Fatalf("%s: %v", p, err)
	}
	b, _, err := a.ReadBytes(context.Background())
	if err != nil {
		t.Fatalf("%s: %v", p, err)
	}
	return b
}

// checkWithFsspec writes the references, naming a copy of the HDF5 file
// in /tmp (which the reference chroot sees), and has fsspec's
// ReferenceFileSystem read every chunk (testdata/virtual/read_parquet.py).
func checkWithFsspec(t *testing.T, refs map[string]any, h5 string) {
	t.Helper()
	tool, _ := filepath.Abs("../../../../shared/tools/zarr-python")
	if _, err := os.Stat("/tmp/refenv/usr/bin/python3"); err != nil {
		t.Log("no reference chroot at /tmp/refenv: fsspec not run")
		return
	}
	if _, err := os.Stat(tool); err != nil || testing.Short() {
		t.Log("no ../shared/tools/zarr-python (or -short): fsspec not run")
		return
	}
	out, err := os.MkdirTemp("/tmp", "parq")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(out)
	for _, f := range []string{filepath.Join(fixtures, "read_parquet.py"), h5} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(out, filepath.Base(f)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	copyPath := filepath.Join(out, filepath.Base(h5))
	moved := map[string]any{}
	for k, v := range refs {
		if c, ok := v.(hdf5.ChunkRef); ok {
			c.URL = copyPath
			v = c
		}
		moved[k] = v
	}
	st, err := fs.New(out)
	if err != nil {
		t.Fatal(err)
	}
	if err := parquet.Write(context.Background(), st, "refs.parq/", moved, 3); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(tool, "read_parquet.py", filepath.Join(out, "refs.parq"), copyPath)
	cmd.Dir = out
	msg, err := cmd.CombinedOutput()
	last := string(bytes.TrimSpace(msg))
	if i := strings.LastIndex(last, "\n"); i >= 0 {
		last = last[i+1:]
	}
	var good, total int
	if _, serr := fmt.Sscanf(last, "%d/%d chunks equal", &good, &total); err != nil || serr != nil || good != total || total == 0 {
		t.Errorf("fsspec on gozarr's Parquet references to %s: %v\n%s", filepath.Base(h5), err, msg)
		return
	}
	t.Logf("fsspec: %s", last)
}

func TestWriteInvalid(t *testing.T) {
	ctx := context.Background()
	arr := `{"zarr_format":2,"shape":[4],"chunks":[2],"dtype":"<i4","compressor":null,"fill_value":0,"order":"C","filters":null}`
	for _, c := range []struct {
		name string
		refs map[string]any
		rs   int
	}{
		{"not a chunk", map[string]any{"a/.zarray": arr, "a/9": hdf5.ChunkRef{URL: "/x"}}, 3},
		{"not JSON", map[string]any{"a/.zarray": "{"}, 3},
		{"stray key", map[string]any{"a/.zarray": arr, "b/0": "base64:AA=="}, 3},
		{"bad base64", map[string]any{"a/.zarray": arr, "a/0": "base64:%%"}, 3},
		{"record size", map[string]any{"a/.zarray": arr}, -1},
		{"huge grid", map[string]any{"a/.zarray": `{"zarr_format":2,"shape":[1000000000000],"chunks":[1],"dtype":"<i4","compressor":null,"fill_value":0,"order":"C","filters":null}`}, 3},
	} {
		if err := parquet.Write(ctx, mem.New(), "", c.refs, c.rs); !errors.Is(err, parquet.ErrInvalid) && !errors.Is(err, parquet.ErrTooLarge) {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}

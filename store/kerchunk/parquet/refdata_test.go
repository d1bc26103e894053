package parquet_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
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

// hdf5Data is package hdf5's reference files: expected.json (h5py's view
// of every dataset), values/ (h5py's values) and kerchunk/ (kerchunk's
// own references, hdf5/testdata/make_kerchunk.py).
const hdf5Data = "../../../hdf5/testdata"

// refFile is one file of expected.json: per dataset, its dtype and the
// .npy of its values.
type refFile struct {
	Datasets map[string]struct {
		DType  string `json:"dtype"`
		Values string `json:"values"`
	} `json:"datasets"`
}

// verdict is a dataset's entry of kerchunk/report.json.
type verdict struct {
	Status  string   `json:"status"`
	Why     string   `json:"why"`
	Strings []string `json:"strings"`
}

func loadJSON(t *testing.T, name string, v any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(hdf5Data, name))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatal(err)
	}
}

// compareDatasets reads the datasets of rf from st whose names skip does
// not reject and compares them with h5py's values; it returns how many
// were equal.
func compareDatasets(t *testing.T, st store.Reader, rf refFile, skip func(p string) bool) int {
	t.Helper()
	ctx := context.Background()
	n := 0
	for p, ds := range rf.Datasets {
		if skip(p) {
			continue
		}
		key := strings.TrimPrefix(p, "/")
		if _, err := st.Get(ctx, key+"/.zarray", store.Full()); err != nil {
			continue // a NetCDF-4 dimension without values: no array
		}
		if !arraytest.CheckNpy(t, st, key, filepath.Join(hdf5Data, "values", ds.Values)) {
			continue
		}
		n++
	}
	return n
}

// loadKerchunkFixtures returns package hdf5's reference files (expected.json),
// make_kerchunk.py's per-dataset report, the absolute path of hdf5's
// testdata and a read-only store over it.
func loadKerchunkFixtures(t *testing.T) (map[string]refFile, map[string]map[string]verdict, string, *fs.Store) {
	t.Helper()
	var files map[string]refFile
	loadJSON(t, "expected.json", &files)
	var report map[string]map[string]verdict
	loadJSON(t, "kerchunk/report.json", &report)
	abs, st := readOnly(t, hdf5Data)
	return files, report, abs, st
}

// TestKerchunkOwnParquetAll reads every reference file of package hdf5
// through kerchunk's own Parquet references (refs_to_dataframe of
// SingleHdf5ToZarr's): every dataset kerchunk describes and gets right
// equals h5py's values (variable-length strings through the string API);
// the ones it refuses have no .zarray.
func TestKerchunkOwnParquetAll(t *testing.T) {
	ctx := context.Background()
	files, report, abs, st := loadKerchunkFixtures(t)
	for name, rf := range files {
		rep := report[name]
		if rep == nil {
			t.Fatalf("%s: not in kerchunk/report.json: rerun make_kerchunk.py", name)
		}
		dir := "kerchunk/" + strings.TrimSuffix(name, filepath.Ext(name)) + ".parq/"
		ps, err := parquet.Open(ctx, st, dir, parquet.WithLocation(abs), parquet.Allow(abs))
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		for p, v := range rep {
			key := strings.TrimPrefix(p, "/")
			switch {
			case v.Status == "refused":
				if _, err := ps.Get(ctx, key+"/.zarray", store.Full()); err == nil {
					t.Errorf("%s%s: kerchunk refused it (%s), yet wrote a .zarray", dir, p, v.Why)
				}
			case v.Strings != nil:
				a, err := zarr.OpenArray(ctx, ps, key)
				if err != nil {
					t.Errorf("%s%s: %v", dir, p, err)
					continue
				}
				got, _, err := zarr.ReadStrings(ctx, a)
				if err != nil || !slices.Equal(got, v.Strings) {
					t.Errorf("%s%s: %q, %v; h5py %q", dir, p, got, err, v.Strings)
				}
			}
		}
		n := compareDatasets(t, ps, rf, func(p string) bool { v := rep[p]; return v.Status != "ok" || v.Strings != nil })
		t.Logf("%s: %d datasets equal h5py's through kerchunk's Parquet", name, n)
	}
}

// TestWriteAllReferenceFiles writes the references gozarr makes for every
// reference file of package hdf5 as Parquet (record size 4) and reads
// them back: every dataset hdf5.References describes equals h5py's values.
func TestWriteAllReferenceFiles(t *testing.T) {
	ctx := context.Background()
	var files map[string]refFile
	loadJSON(t, "expected.json", &files)
	dirst, err := fs.New(hdf5Data, fs.ReadOnly())
	if err != nil {
		t.Fatal(err)
	}
	for name, rf := range files {
		abs, err := filepath.Abs(filepath.Join(hdf5Data, name))
		if err != nil {
			t.Fatal(err)
		}
		f, err := hdf5.Open(ctx, dirst, name)
		if err != nil {
			t.Fatal(err)
		}
		refs, err := hdf5.References(ctx, f, hdf5.RefsOptions{URL: abs, SkipUnsupported: true})
		if err != nil {
			t.Fatal(err)
		}
		skipped := map[string]bool{}
		for _, s := range refs.Skipped {
			p, _, _ := strings.Cut(s, ": ")
			skipped[p] = true
		}
		ps := writeAndOpen(t, name, refs.Refs, 4, abs)
		n := compareDatasets(t, ps, rf, func(p string) bool { return skipped[p] })
		if n == 0 {
			t.Errorf("%s: no dataset read", name)
		}
		t.Logf("%s: %d datasets equal h5py's through gozarr's Parquet (skipped %d: %q)", name, n, len(refs.Skipped), refs.Skipped)
	}
}

// TestWriteJSONKerchunk turns kerchunk's own Parquet references into JSON
// (WriteJSON) and reads them through store/kerchunk: the same values as
// kerchunk's own JSON references give, every dataset of every file.
func TestWriteJSONKerchunk(t *testing.T) {
	ctx := context.Background()
	files, report, abs, st := loadKerchunkFixtures(t)
	for name, rf := range files {
		stem := strings.TrimSuffix(name, filepath.Ext(name))
		ps, err := parquet.Open(ctx, st, "kerchunk/"+stem+".parq/")
		if err != nil {
			t.Fatal(err)
		}
		var doc bytes.Buffer
		if err := ps.WriteJSON(ctx, &doc); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		// The document stands where the Parquet directory was: its
		// relative URLs ("../../NAME") resolve as from there.
		m := mem.New()
		m.Set(ctx, "refs.json", doc.Bytes())
		ks, err := kerchunk.Open(ctx, m, "refs.json", kerchunk.WithLocation(filepath.Join(abs, "kerchunk", stem+".parq")), kerchunk.Allow(abs))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		rep := report[name]
		n := compareDatasets(t, ks, rf, func(p string) bool { v := rep[p]; return v.Status != "ok" || v.Strings != nil })
		t.Logf("%s: %d datasets equal h5py's through WriteJSON of kerchunk's Parquet", name, n)
	}
}

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
	// zarr-python-env.sh does not install fsspec's Parquet reader; a chroot
	// made by it alone cannot run the check (not gozarr's failure).
	if msg, err := exec.Command(tool, "-c", "import cramjam, fsspec, fastparquet, h5py").CombinedOutput(); err != nil {
		t.Logf("the reference chroot lacks fsspec's Parquet reader (install python3-fsspec python3-fastparquet python3-cramjam in it): fsspec not run: %s", bytes.TrimSpace(msg))
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

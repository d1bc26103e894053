package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gozarr/gozarr/internal/npy"
)

// TestVirtualizeHelpExamples runs the examples of zarrcat help virtualize
// and checks that each writes kerchunk JSON version 1 naming the URL asked.
func TestVirtualizeHelpExamples(t *testing.T) {
	tmp := t.TempDir()
	n := 0
	for _, line := range strings.Split(virtualizeHelp, "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "zarrcat ") || strings.Contains(line, "[") {
			continue
		}
		line = strings.ReplaceAll(line, "hdf5/testdata/", "../../hdf5/testdata/")
		line = strings.ReplaceAll(line, "/tmp/", tmp+"/")
		args := strings.Fields(line)[1:]
		var out bytes.Buffer
		if err := run(context.Background(), args, &out, &out); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		var o string
		for i, a := range args {
			if a == "-o" {
				o = args[i+1]
			}
		}
		b, err := os.ReadFile(o)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Version int            `json:"version"`
			Refs    map[string]any `json:"refs"`
		}
		if err := json.Unmarshal(b, &doc); err != nil || doc.Version != 1 || doc.Refs[".zgroup"] == nil {
			t.Fatalf("%q wrote no kerchunk v1 document (%v)", line, err)
		}
		wantURL := args[len(args)-1]
		if f, _, ok := splitHDF5(wantURL); ok {
			wantURL = f
		}
		for i, a := range args {
			if a == "--url" {
				wantURL = args[i+1]
			}
		}
		if !filepath.IsAbs(wantURL) && !strings.Contains(wantURL, "://") {
			wantURL, _ = filepath.Abs(wantURL)
		}
		refs := 0
		for k, v := range doc.Refs {
			if r, ok := v.([]any); ok {
				if r[0] != wantURL {
					t.Fatalf("%q: %s names %v, want %s", line, k, r[0], wantURL)
				}
				refs++
			}
		}
		if refs == 0 {
			t.Fatalf("%q: no chunk reference", line)
		}
		n++
	}
	if n == 0 {
		t.Fatal("no example")
	}
}

// TestVirtualizeErrors: a file that is not HDF5, a missing file, a
// directory and no argument are clear errors.
func TestVirtualizeErrors(t *testing.T) {
	for _, args := range [][]string{
		{"virtualize", "../../hdf5/testdata/gen.py"},
		{"virtualize", "../../hdf5/testdata/nonexistent.h5"},
		{"virtualize", "../../hdf5/testdata"},
		{"virtualize"},
	} {
		var out bytes.Buffer
		if err := run(context.Background(), args, &out, &out); err == nil {
			t.Errorf("%v: no error", args)
		}
	}
}

// TestHDF5Target: info, tree, stats and get read an HDF5 or NetCDF-4 file
// directly (virtualized in memory), and get's values equal h5py's.
func TestHDF5Target(t *testing.T) {
	ctx := context.Background()
	tmp := t.TempDir()
	for _, tc := range []struct{ target, values string }{
		{"../../hdf5/testdata/cf.nc/temp", "cf.nc__temp.npy"},
		{"../../hdf5/testdata/cf.nc/surface/pressure", "cf.nc__surface__pressure.npy"},
		{"../../hdf5/testdata/latest.h5/earray_dim1", "latest.h5__earray_dim1.npy"},
		{"../../hdf5/testdata/latest.h5/btree2_gzip", "latest.h5__btree2_gzip.npy"},
		{"../../hdf5/testdata/earliest.h5/sparse", "earliest.h5__sparse.npy"},
	} {
		out := filepath.Join(tmp, "out.npy")
		var msg bytes.Buffer
		if err := run(ctx, []string{"get", "-q", "-o", out, tc.target}, &msg, &msg); err != nil {
			t.Fatalf("get %s: %v", tc.target, err)
		}
		got, err := npy.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		want, err := npy.ReadFile(filepath.Join("../../hdf5/testdata/values", tc.values))
		if err != nil {
			t.Fatal(err)
		}
		if got.Descr != want.Descr || !bytes.Equal(got.Data, want.Data) || fmt.Sprint(got.Shape) != fmt.Sprint(want.Shape) {
			t.Errorf("get %s: %s %v differs from h5py's %s %v", tc.target, got.Descr, got.Shape, want.Descr, want.Shape)
		}
	}
	for _, args := range [][]string{
		{"info", "../../hdf5/testdata/cf.nc/temp"},
		{"tree", "../../hdf5/testdata/latest.h5"},
		{"stats", "../../hdf5/testdata/earliest.h5/chunked_gzip_shuffle"},
	} {
		var out bytes.Buffer
		if err := run(ctx, args, &out, &out); err != nil {
			t.Errorf("%v: %v", args, err)
		}
		if out.Len() == 0 {
			t.Errorf("%v: no output", args)
		}
	}
	var out bytes.Buffer
	if err := run(ctx, []string{"info", "../../hdf5/testdata/cf.nc/nonexistent"}, &out, &out); err == nil {
		t.Error("info of a missing node: no error")
	}
}

// TestVirtualizeUnsupported: a file with a compound dataset fails, naming
// it and the flag, unless --skip-unsupported, which lists it on stderr.
func TestVirtualizeUnsupported(t *testing.T) {
	ctx := context.Background()
	o := filepath.Join(t.TempDir(), "refs.json")
	var out bytes.Buffer
	err := run(ctx, []string{"virtualize", "-o", o, "../../hdf5/testdata/filters.h5"}, &out, &out)
	if err == nil || !strings.Contains(err.Error(), "/compound") || !strings.Contains(err.Error(), "--skip-unsupported") {
		t.Fatalf("error %v, want one naming /compound and --skip-unsupported", err)
	}
	out.Reset()
	if err := run(ctx, []string{"virtualize", "--skip-unsupported", "-o", o, "../../hdf5/testdata/filters.h5"}, &out, &out); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/compound", "/vlen_str", "/masked_mixed"} {
		if !strings.Contains(out.String(), "skipped "+p) {
			t.Errorf("stderr %q does not list %s", out.String(), p)
		}
	}
}

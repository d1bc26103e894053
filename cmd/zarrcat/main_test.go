package main

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gozarr/gozarr/internal/npy"
	"github.com/gozarr/gozarr/internal/refdata"
)

const refDir = "../../testdata/refdata"

// TestGetNpyMatchesReference runs "zarrcat get --format npy" on every
// reference array and compares the file it writes with the expected .npy:
// same descr, shape and bytes (the corpus .npy files are little-endian, as
// zarrcat writes). A NaN may differ in payload only where the corpus says
// any NaN matches; no case here needs that.
func TestGetNpyMatchesReference(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	for _, c := range refdata.Cases(t) {
		t.Run(c.Name, func(t *testing.T) {
			out := filepath.Join(dir, strings.ReplaceAll(c.Name, "/", "_")+".npy")
			var stdout bytes.Buffer
			err := run(ctx, []string{"get", "--format", "npy", "-o", out, filepath.Join(refDir, c.Path)}, &stdout, &stdout)
			if err != nil {
				if strings.Contains(err.Error(), "unknown codec") {
					t.Skipf("codec not available: %v", err)
				}
				t.Fatal(err)
			}
			got, err := npy.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			want := c.ExpectedArray(t)
			if got.Descr != want.Descr || !equalInts(got.Shape, want.Shape) || !bytes.Equal(got.Data, want.Data) {
				t.Fatalf("got %s %v (%d bytes), want %s %v (%d bytes)", got.Descr, got.Shape, len(got.Data), want.Descr, want.Shape, len(want.Data))
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

// TestGetSelections checks selections through the command line against
// slices of the expected .npy computed by hand.
func TestGetSelections(t *testing.T) {
	ctx := context.Background()
	target := filepath.Join(refDir, "v3_dtype_int16.zarr") // shape [31 19]
	want, err := npy.ReadFile(filepath.Join(refDir, "v3_dtype_int16.npy"))
	if err != nil {
		t.Fatal(err)
	}
	at := func(i, j int) []byte { o := (i*19 + j) * 2; return want.Data[o : o+2] }
	tests := []struct {
		sel   string
		shape []int
		elems [][2]int
	}{
		{"-1,-1", nil, [][2]int{{30, 18}}},
		{"0:3, 5", []int{3}, [][2]int{{0, 5}, {1, 5}, {2, 5}}},
		{"[::-15, ::9]", []int{3, 3}, [][2]int{{30, 0}, {30, 9}, {30, 18}, {15, 0}, {15, 9}, {15, 18}, {0, 0}, {0, 9}, {0, 18}}},
		{"..., 18", []int{31}, nil},
	}
	for _, tc := range tests {
		var stdout bytes.Buffer
		if err := run(ctx, []string{"get", "--format=npy", target, tc.sel}, &stdout, &stdout); err != nil {
			t.Fatalf("%s: %v", tc.sel, err)
		}
		got, err := npy.Read(&stdout)
		if err != nil {
			t.Fatal(err)
		}
		if !equalInts(got.Shape, tc.shape) && !(len(got.Shape) == 0 && len(tc.shape) == 0) {
			t.Fatalf("%s: shape %v, want %v", tc.sel, got.Shape, tc.shape)
		}
		elems := tc.elems
		if elems == nil {
			for i := range 31 {
				elems = append(elems, [2]int{i, 18})
			}
		}
		var exp []byte
		for _, e := range elems {
			exp = append(exp, at(e[0], e[1])...)
		}
		if !bytes.Equal(got.Data, exp) {
			t.Errorf("%s: values differ", tc.sel)
		}
	}
}

// TestErrors checks that mistakes are one clear error, never a panic.
func TestErrors(t *testing.T) {
	ctx := context.Background()
	arr := filepath.Join(refDir, "v3_dtype_int16.zarr")
	tests := []struct {
		args  []string
		usage bool
		msg   string
	}{
		{nil, true, "no command"},
		{[]string{"frobnicate"}, true, "unknown command"},
		{[]string{"get"}, true, "TARGET"},
		{[]string{"get", "--format", "xml", arr}, true, "npy, text, csv, json, raw"},
		{[]string{"get", "--bogus", arr}, true, "unknown flag"},
		{[]string{"get", arr, "0:2:0"}, false, "step"},
		{[]string{"get", arr, "99"}, false, "out of bounds"},
		{[]string{"get", arr, "1,2,3"}, false, "dimensions"},
		{[]string{"get", "/nonexistent/a.zarr"}, false, "no such file"},
		{[]string{"info", refDir + "/v3_group.zarr/measurements/nothing"}, false, "no such file"},
		{[]string{"get", refDir}, false, "not found"},
	}
	for _, tc := range tests {
		var out bytes.Buffer
		err := run(ctx, tc.args, &out, &out)
		if err == nil {
			t.Errorf("%v: no error", tc.args)
			continue
		}
		if errors.Is(err, errUsage) != tc.usage {
			t.Errorf("%v: usage error = %v, want %v (%v)", tc.args, !tc.usage, tc.usage, err)
		}
		if !strings.Contains(strings.ToLower(err.Error()), strings.ToLower(tc.msg)) {
			t.Errorf("%v: error %q does not mention %q", tc.args, err, tc.msg)
		}
	}
}

// TestInfo checks the fields info prints for a sharded array.
func TestInfo(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), []string{"info", filepath.Join(refDir, "v3_shard_start.zarr")}, &out, &out); err != nil {
		t.Fatal(err)
	}
	fields := map[string]string{}
	for _, line := range strings.Split(out.String(), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok {
			fields[k] = strings.TrimSpace(v)
		}
	}
	for k, want := range map[string]string{
		"shard_shape":       "[21 × 20]",
		"inner_chunk_shape": "[7 × 5]",
		"inner_codecs":      `bytes{"endian":"little"} → gzip{"level":4}`,
		"index_codecs":      `bytes{"endian":"little"} → crc32c`,
		"index_location":    "start (196 bytes)",
		"shards":            "12 (grid [3 × 4])",
	} {
		if fields[k] != want {
			t.Errorf("info %s: %q, want %q", k, fields[k], want)
		}
	}
}

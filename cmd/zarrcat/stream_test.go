package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/store/fs"
	"github.com/gozarr/gozarr/store/mem"
	"github.com/gozarr/gozarr/zarr"
)

// TestGetStreamsInBlocks: get with a tiny --budget (blocks of a few
// elements, aligned to chunks where they can be) writes the same bytes as
// one whole read, for plain, sharded and strided selections.
func TestGetStreamsInBlocks(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct{ arr, sel string }{
		{"v3_dtype_int16.zarr", ""},
		{"v3_dtype_int16.zarr", "3:29, 1:18"},
		{"v3_dtype_int16.zarr", "::-3, 5"},
		{"v3_dtype_int16.zarr", "7, ::2"},
		{"v3_shard_start.zarr", ""},
		{"v3_shard_start.zarr", "2:50:3, ::-1"},
	} {
		for _, budget := range []string{"8", "64", "400", "4KiB"} {
			dir := filepath.Join(refDir, c.arr)
			args := []string{"get", "--format", "raw", "--budget", budget, dir}
			if c.sel != "" {
				args = append(args, c.sel)
			}
			var out bytes.Buffer
			if err := run(ctx, args, &out, &out); err != nil {
				t.Fatalf("%v: %v", args, err)
			}
			st, err := fs.New(dir, fs.ReadOnly())
			if err != nil {
				t.Fatal(err)
			}
			a, err := zarr.OpenArray(ctx, st, "")
			if err != nil {
				t.Fatal(err)
			}
			var items []nd.Item
			if c.sel != "" {
				if items, err = nd.ParseSelection(c.sel); err != nil {
					t.Fatal(err)
				}
			}
			want, _, err := a.ReadBytes(ctx, items...)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(out.Bytes(), want) {
				t.Errorf("%s [%s] --budget %s: %d bytes differ from one whole read (%d bytes)", c.arr, c.sel, budget, out.Len(), len(want))
			}
		}
	}
}

// memFloatArray creates a float32 array of shape and chunks in a memory
// store, sharded with inner chunks inner when given.
func memFloatArray(t *testing.T, shape, chunks []int, inner ...int) *zarr.Array {
	t.Helper()
	var opts []zarr.MetadataOption
	if inner != nil {
		opts = append(opts, zarr.Shards(chunks...))
		chunks = inner
	}
	m, err := zarr.NewArrayMetadata(shape, dtype.TypeFloat32, chunks, opts...)
	if err != nil {
		t.Fatal(err)
	}
	a, err := zarr.CreateArray(context.Background(), mem.New(), "a", m)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestStreamSplit: the blocks streaming reads (zarr.Array.Split) stay
// within the byte limit, start on chunk boundaries along the split
// dimension where a chunk fits, and tile the selection in C order: the
// blocks of zarrcat's own splitter before it moved into zarr.
func TestStreamSplit(t *testing.T) {
	a := memFloatArray(t, []int{2200, 10}, []int{512, 10})
	sel := nd.Selection{{Start: 100, Count: 2000, Step: 1}, {Start: 0, Count: 10, Step: 1}}
	var starts []int
	total := 0
	for b := range a.Split(sel, 512*10*4*2) {
		if n := b.NumElements() * 4; n > 512*10*4*2 {
			t.Fatalf("block %v is %d bytes", b, n)
		}
		if b[0].Start != 100+total/10 {
			t.Fatalf("block %v starts at row %d, want %d", b, b[0].Start, 100+total/10)
		}
		starts = append(starts, b[0].Start)
		total += b.NumElements()
	}
	if total != 20000 || !equalInts(starts, []int{100, 1024, 2048}) {
		t.Fatalf("blocks start at rows %v and hold %d elements; want [100 1024 2048] and 20000", starts, total)
	}
}

// TestGetFormats checks text, csv and json for a 2-D selection of known
// values.
func TestGetFormats(t *testing.T) {
	target := filepath.Join(refDir, "v3_dtype_int16.zarr") // [0,0:3] = -8 -5 4; [1,0:3] = -4 2 7
	for _, c := range []struct{ format, want string }{
		{"text", "-8 -5 4\n-4 2 7\n"},
		{"csv", "-8,-5,4\n-4,2,7\n"},
		{"json", "[[-8, -5, 4],\n [-4, 2, 7]]\n"},
	} {
		var out bytes.Buffer
		if err := run(context.Background(), []string{"get", "--format", c.format, target, "0:2, 0:3"}, &out, &out); err != nil {
			t.Fatal(err)
		}
		if out.String() != c.want {
			t.Errorf("%s: %q, want %q", c.format, out.String(), c.want)
		}
	}
	for out, want := range map[string]string{"a.csv": "csv", "a.json": "json", "a.bin": "raw", "a.txt": "text", "a.npy": "npy", "a": "npy", "-": "text", "": "text"} {
		if got, err := formatOf("", out); got != want || err != nil {
			t.Errorf("format of -o %q: %q, %v; want %q", out, got, err, want)
		}
	}
	if _, err := formatOf("xml", ""); err == nil || !strings.Contains(err.Error(), "csv") {
		t.Errorf("--format xml: %v", err)
	}
}

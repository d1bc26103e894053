package zarr

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/store/fs"
	"github.com/gozarr/gozarr/store/mem"
)

// TestSparseStringReadBatches: a read of few elements of many chunks runs
// in batches whose decoded text stays near the batch size, and reads what
// one read of everything reads; a dense read is one batch.
func TestSparseStringReadBatches(t *testing.T) {
	ctx := context.Background()
	old := vlenBatchBytes
	vlenBatchBytes = 64 << 10
	defer func() { vlenBatchBytes, vlenBatchHook = old, nil }()
	m, err := NewArrayMetadata([]int{64 * 100, 3}, dtype.TypeVarString, []int{100, 2})
	if err != nil {
		t.Fatal(err)
	}
	a, err := CreateArray(ctx, mem.New(), "s", m)
	if err != nil {
		t.Fatal(err)
	}
	all := make([]string, 64*100*3)
	for i := range all {
		all[i] = fmt.Sprintf("%d:%s", i, strings.Repeat("x", i%200))
	}
	if err := WriteStrings(ctx, a, all); err != nil {
		t.Fatal(err)
	}
	var batches []int64
	vlenBatchHook = func(n int64) { batches = append(batches, n) }
	for _, c := range []struct {
		name  string
		items []nd.Item
		many  bool
	}{
		{"every 37th row", []nd.Item{nd.Every(37), nd.All()}, true},
		{"reversed, one column", []nd.Item{nd.Slice(-1, -6401, -51), nd.Index(2)}, true},
		{"index array columns", []nd.Item{nd.Every(9), nd.IndexArray(2, 0)}, true},
		{"dense", []nd.Item{nd.Range(0, 6400)}, false},
		{"reordered rows", []nd.Item{nd.IndexArray(4000, 37, 1200, 5), nd.Index(1)}, false},
	} {
		batches = batches[:0]
		got, shape, err := ReadStrings(ctx, a, c.items...)
		if err != nil {
			t.Fatal(err)
		}
		sel, _ := a.Selection(c.items...)
		var want []string
		for i := range sel.NumElements() {
			idx := make([]int, len(sel))
			rem := i
			full := sel.FullShape()
			for d := len(sel) - 1; d >= 0; d-- {
				k := rem % full[d]
				rem /= full[d]
				if sel[d].Order != nil {
					k = sel[d].Order[k]
				}
				if sel[d].Index != nil {
					idx[d] = sel[d].Index[k]
				} else {
					idx[d] = sel[d].Start + k*sel[d].Step
				}
			}
			want = append(want, all[idx[0]*3+idx[1]])
		}
		if !slices.Equal(got, want) || !slices.Equal(shape, sel.Shape()) {
			t.Fatalf("%s: read %v %q...\nwant %q...", c.name, shape, got[:3], want[:3])
		}
		if c.many != (len(batches) > 1) {
			t.Errorf("%s: %d batches", c.name, len(batches))
		}
		for i, n := range batches {
			// A batch is sized from the one before: within twice the aim.
			if n > 2*vlenBatchBytes && i > 0 {
				t.Errorf("%s: batch %d decoded %d bytes, aim %d", c.name, i, n, vlenBatchBytes)
			}
		}
	}
	// A sparse write: every 37th row, in batches, the rest kept.
	batches = batches[:0]
	rows := make([]string, 0, 3*(6400/37+1))
	for i := 0; i < 6400; i += 37 {
		for j := range 3 {
			all[i*3+j] = fmt.Sprintf("new %d", i*3+j)
			rows = append(rows, all[i*3+j])
		}
	}
	if err := WriteStrings(ctx, a, rows, nd.Every(37), nd.All()); err != nil {
		t.Fatal(err)
	}
	if len(batches) < 2 {
		t.Errorf("sparse write in %d batches", len(batches))
	}
	for i, n := range batches {
		if n > 2*vlenBatchBytes && i > 0 {
			t.Errorf("write batch %d decoded %d bytes, aim %d", i, n, vlenBatchBytes)
		}
	}
	got, _, err := ReadStrings(ctx, a)
	if err != nil || !slices.Equal(got, all) {
		t.Fatalf("after the sparse write: %v", err)
	}
}

// TestStringsHandleBuffer reads every fixture through the path 32-bit
// platforms take (handles in a buffer of their own, resolved from it).
func TestStringsHandleBuffer(t *testing.T) {
	defer func(v bool) { vlenInPlace = v }(vlenInPlace)
	vlenInPlace = false
	ctx := context.Background()
	for _, name := range []string{"v3_string", "v2_string_F", "v3_string_sharded", "v3_bytes_fill", "v2_string_0d"} {
		st, err := fs.New("../testdata/vlen", fs.ReadOnly())
		if err != nil {
			t.Fatal(err)
		}
		a, err := OpenArray(ctx, st, name+".zarr")
		if err != nil {
			t.Fatal(err)
		}
		vlenInPlace = true
		var want, got []string
		if a.Metadata().DataType == dtype.TypeVarBytes {
			w, _, err1 := ReadByteStrings(ctx, a, nd.SliceFrom(1))
			vlenInPlace = false
			g, _, err2 := ReadByteStrings(ctx, a, nd.SliceFrom(1))
			if err1 != nil || err2 != nil {
				t.Fatal(err1, err2)
			}
			for i := range w {
				want, got = append(want, string(w[i])), append(got, string(g[i]))
			}
		} else {
			items := []nd.Item{}
			if a.Metadata().NDim() > 0 {
				items = []nd.Item{nd.Every(2)}
			}
			w, _, err1 := ReadStrings(ctx, a, items...)
			vlenInPlace = false
			g, _, err2 := ReadStrings(ctx, a, items...)
			if err1 != nil || err2 != nil {
				t.Fatal(err1, err2)
			}
			want, got = w, g
		}
		if !slices.Equal(got, want) || len(got) == 0 {
			t.Errorf("%s: %q, want %q", name, got, want)
		}
	}
}

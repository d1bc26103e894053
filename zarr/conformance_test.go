package zarr_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/internal/refdata"
	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/pipeline"
	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/fs"
	"github.com/gozarr/gozarr/store/mem"
	"github.com/gozarr/gozarr/zarr"
)

// refDir is the reference corpus written by zarr-python 3.4.
var refDir = refdata.Dir()

// sameValues compares two buffers of dt elements: bit for bit, except that
// any NaN equals any NaN.
func sameValues(dt dtype.DataType, got, want []byte) (int, bool) {
	if bytes.Equal(got, want) {
		return -1, true
	}
	if len(got) != len(want) {
		return 0, false
	}
	n := dt.Size()
	for i := 0; i < len(got); i += n {
		g, w := got[i:i+n], want[i:i+n]
		if bytes.Equal(g, w) {
			continue
		}
		if dt.Kind() == dtype.Float || dt.Kind() == dtype.Complex {
			u := dt.SwapUnit()
			ok := true
			for j := 0; j < n; j += u {
				if !bytes.Equal(g[j:j+u], w[j:j+u]) && !(isNaN(g[j:j+u]) && isNaN(w[j:j+u])) {
					ok = false
				}
			}
			if ok {
				continue
			}
		}
		return i / n, false
	}
	return -1, true
}

func isNaN(b []byte) bool {
	switch len(b) {
	case 2:
		v := binary.LittleEndian.Uint16(b)
		return v&0x7c00 == 0x7c00 && v&0x3ff != 0
	case 4:
		return math.IsNaN(float64(math.Float32frombits(binary.LittleEndian.Uint32(b))))
	case 8:
		return math.IsNaN(math.Float64frombits(binary.LittleEndian.Uint64(b)))
	}
	return false
}

// gather picks the elements sel selects out of a C-order array, one element
// at a time: an oracle independent of nd.Copy and the chunk planner.
func gather(data []byte, shape []int, item int, sel nd.Selection) []byte {
	strides := make([]int, len(shape))
	s := 1
	for d := len(shape) - 1; d >= 0; d-- {
		strides[d] = s
		s *= shape[d]
	}
	var out []byte
	idx := make([]int, len(sel))
	var rec func(d, off int)
	rec = func(d, off int) {
		if d == len(sel) {
			out = append(out, data[off*item:(off+1)*item]...)
			return
		}
		for k := 0; k < sel[d].Count; k++ {
			idx[d] = sel[d].Start + k*sel[d].Step
			rec(d+1, off+idx[d]*strides[d])
		}
	}
	rec(0, 0)
	return out
}

// selectionsFor returns a handful of selections for a shape: steps,
// negative indices, dropped dimensions, edges.
func selectionsFor(shape []int) []string {
	if len(shape) == 0 {
		return []string{"...", "()"}
	}
	out := []string{"...", "::2", "-1", "::-1", "1:-1"}
	parts := make([]string, len(shape))
	for d, n := range shape {
		parts[d] = fmt.Sprintf("%d:", max(0, n-3))
	}
	out = append(out, strings.Join(parts, ","))
	if len(shape) >= 2 {
		out = append(out, "..., ::3", fmt.Sprintf("%d, ::-2", shape[0]/2), ":, -1")
	}
	if len(shape) >= 3 {
		out = append(out, "1, :, 2:", "::2, 1:5:2, -1")
	}
	return out
}

func openRef(t *testing.T, c refdata.Case) *zarr.Array {
	t.Helper()
	st, err := fs.New(refDir, fs.ReadOnly())
	if err != nil {
		t.Fatal(err)
	}
	a, err := zarr.OpenArray(context.Background(), st, strings.TrimSuffix(c.Path, "/"))
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	return a
}

// TestConformance reads every reference array, whole and through a set of
// selections, and compares with its .npy, under the default pipeline and
// with concurrency 1.
func TestConformance(t *testing.T) {
	ctx := context.Background()
	passed := 0
	cases := refdata.Cases(t)
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			want := c.ExpectedArray(t)
			a := openRef(t, c)
			dt := a.Metadata().DataType
			if !slices.Equal(a.Shape(), c.Shape) || !slices.Equal(want.Shape, c.Shape) {
				t.Fatalf("shape %v, npy %v, manifest %v", a.Shape(), want.Shape, c.Shape)
			}
			for _, opt := range []pipeline.Options{{}, {IOConcurrency: 1, DecodeConcurrency: 1}} {
				a := a
				if opt.IOConcurrency == 1 {
					st, _ := fs.New(refDir, fs.ReadOnly())
					var err error
					a, err = zarr.OpenArray(ctx, st, c.Path, zarr.WithPipeline(opt))
					if err != nil {
						t.Fatal(err)
					}
				}
				got, shape, err := a.ReadBytes(ctx)
				if err != nil {
					t.Fatalf("read all (%+v): %v", opt, err)
				}
				if !slices.Equal(shape, c.Shape) {
					t.Fatalf("shape %v", shape)
				}
				if i, ok := sameValues(dt, got, want.Data); !ok {
					t.Fatalf("full read (%+v) differs at element %d", opt, i)
				}
				for _, text := range selectionsFor(c.Shape) {
					items, err := nd.ParseSelection(text)
					if err != nil {
						t.Fatal(err)
					}
					sel, err := nd.Normalize(items, c.Shape)
					if err != nil {
						continue // e.g. an index into a zero-length dimension
					}
					got, _, err := a.ReadBytes(ctx, items...)
					if err != nil {
						t.Fatalf("read %q: %v", text, err)
					}
					exp := gather(want.Data, c.Shape, dt.Size(), sel)
					if i, ok := sameValues(dt, got, exp); !ok {
						t.Fatalf("read %q (%+v) differs at element %d", text, opt, i)
					}
				}
			}
			passed++
		})
	}
	t.Logf("conformance: %d of %d reference arrays read equal to their .npy", passed, len(cases))
}

// storedKeys lists the chunk keys of an array directory in a store,
// metadata excluded.
func storedKeys(t *testing.T, l store.Lister, prefix string) []string {
	t.Helper()
	var keys []string
	for k, err := range l.List(context.Background(), prefix) {
		if err != nil {
			t.Fatal(err)
		}
		base := k[strings.LastIndex(k, "/")+1:]
		if base == zarr.MetadataKey || strings.HasPrefix(base, ".z") {
			continue
		}
		keys = append(keys, strings.TrimPrefix(k, prefix))
	}
	slices.Sort(keys)
	return keys
}

// TestWriteConformance writes each v3 reference case's values with the same
// metadata into a fresh store, reads them back, and checks that the chunk
// keys written are exactly those zarr-python wrote.
func TestWriteConformance(t *testing.T) {
	ctx := context.Background()
	ref, err := fs.New(refDir, fs.ReadOnly())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range refdata.Cases(t) {
		if c.ZarrFormat != 3 {
			continue
		}
		t.Run(c.Name, func(t *testing.T) {
			want := c.ExpectedArray(t)
			src := openRef(t, c)
			st := mem.New()
			pipe := pipeline.Options{WriteEmptyChunks: strings.Contains(c.Notes, "write_empty_chunks=True")}
			a, err := zarr.CreateArray(ctx, st, "arr", src.Metadata(), zarr.WithPipeline(pipe))
			if err != nil {
				t.Fatal(err)
			}
			if err := a.WriteBytes(ctx, want.Data); err != nil {
				t.Fatalf("write: %v", err)
			}
			got, _, err := a.ReadBytes(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if i, ok := sameValues(src.Metadata().DataType, got, want.Data); !ok {
				t.Fatalf("read back differs at element %d", i)
			}
			gotKeys := storedKeys(t, st, "arr/")
			wantKeys := storedKeys(t, ref, strings.TrimSuffix(c.Path, "/")+"/")
			if !slices.Equal(gotKeys, wantKeys) {
				t.Errorf("chunk keys differ:\n gozarr      %v\n zarr-python %v", gotKeys, wantKeys)
			}
		})
	}
}

// TestBandedWrites writes each v3 reference case in bands of rows that do
// not line up with its chunks (so most chunks and shards are written by
// read-modify-write, several times), plus a reversed-step pass, and checks
// values and chunk keys against zarr-python's.
func TestBandedWrites(t *testing.T) {
	ctx := context.Background()
	ref, err := fs.New(refDir, fs.ReadOnly())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range refdata.Cases(t) {
		if c.ZarrFormat != 3 || len(c.Shape) == 0 || c.Shape[0] < 2 {
			continue
		}
		t.Run(c.Name, func(t *testing.T) {
			want := c.ExpectedArray(t)
			src := openRef(t, c)
			item := src.Metadata().DataType.Size()
			st := mem.New()
			pipe := pipeline.Options{WriteEmptyChunks: strings.Contains(c.Notes, "write_empty_chunks=True")}
			a, err := zarr.CreateArray(ctx, st, "arr", src.Metadata(), zarr.WithPipeline(pipe))
			if err != nil {
				t.Fatal(err)
			}
			rowBytes := len(want.Data) / c.Shape[0]
			const band = 5
			for r := 0; r < c.Shape[0]; r += band {
				end := min(r+band, c.Shape[0])
				if err := a.WriteBytes(ctx, want.Data[r*rowBytes:end*rowBytes], nd.Range(r, end)); err != nil {
					t.Fatalf("write rows %d:%d: %v", r, end, err)
				}
			}
			// Rewrite the odd rows, last first, through a negative step.
			rows := (c.Shape[0]) / 2
			var rev []byte
			for k := range rows {
				r := 2*rows - 1 - 2*k
				rev = append(rev, want.Data[r*rowBytes:(r+1)*rowBytes]...)
			}
			if err := a.WriteBytes(ctx, rev, nd.Slice(2*rows-1, -c.Shape[0]-1, -2)); err != nil {
				t.Fatalf("reversed write: %v", err)
			}
			got, _, err := a.ReadBytes(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if i, ok := sameValues(src.Metadata().DataType, got, want.Data); !ok {
				t.Fatalf("read back differs at element %d (item %d)", i, item)
			}
			gotKeys := storedKeys(t, st, "arr/")
			wantKeys := storedKeys(t, ref, strings.TrimSuffix(c.Path, "/")+"/")
			if !slices.Equal(gotKeys, wantKeys) {
				t.Errorf("chunk keys differ:\n gozarr      %v\n zarr-python %v", gotKeys, wantKeys)
			}
		})
	}
}

package pipeline_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/gozarr/gozarr/cache"
	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/store/mem"
	"github.com/gozarr/gozarr/zarr"
)

// TestPlacedPointsItemSizes reads points placed straight from their
// chunks (grouping by a counting sort) for items of 1, 2, 8 and 16
// bytes, from plain chunks and from shards, some of them missing (the
// fill value), asked at random with repeats and in grouped order, with
// and without a chunk cache, and compares every value with the array
// read whole.
func TestPlacedPointsItemSizes(t *testing.T) {
	ctx := context.Background()
	shape := []int{23, 19, 11}
	for _, typ := range []dtype.DataType{dtype.TypeUint8, dtype.TypeInt16, dtype.TypeFloat64, dtype.TypeComplex128} {
		for _, sharded := range []bool{false, true} {
			name := fmt.Sprintf("%v/sharded=%v", typ, sharded)
			var fill any = 3
			if typ == dtype.TypeComplex128 {
				fill = complex(3, -1)
			}
			opts := []zarr.MetadataOption{zarr.FillValue(fill)}
			if sharded {
				opts = append(opts, zarr.Shards(10, 12, 6))
			}
			meta, err := zarr.NewArrayMetadata(shape, typ, []int{5, 4, 3}, opts...)
			if err != nil {
				t.Fatal(err)
			}
			st := mem.New()
			a, err := zarr.CreateArray(ctx, st, "a", meta)
			if err != nil {
				t.Fatal(err)
			}
			item := typ.Size()
			// Rows [0, 20) written with bytes that differ from element to
			// element (and byte to byte); the chunks (shards) past them
			// stay missing.
			box := []int{20, 19, 11}
			data := make([]byte, nd.NumElements(box)*item)
			for i := range data {
				data[i] = byte(i*7 + i/item)
			}
			if err := a.WriteBytes(ctx, data, nd.Range(0, 20)); err != nil {
				t.Fatal(err)
			}
			all, _, err := a.ReadBytes(ctx)
			if err != nil {
				t.Fatal(err)
			}
			r := rand.New(rand.NewPCG(5, uint64(item)))
			const n = 3000
			coords := [][]int{make([]int, n), make([]int, n), make([]int, n)}
			for k := range n {
				for d := range 3 {
					coords[d][k] = r.IntN(shape[d])
				}
				if k%3 == 2 {
					j := r.IntN(k)
					for d := range 3 {
						coords[d][k] = coords[d][j]
					}
				}
			}
			// The same points in grouped order: by chunk (shard, inner
			// chunk).
			grouped := [][]int{slices.Clone(coords[0]), slices.Clone(coords[1]), slices.Clone(coords[2])}
			perm := make([]int, n)
			for k := range perm {
				perm[k] = k
			}
			unit := func(k int) []int {
				p := []int{coords[0][k], coords[1][k], coords[2][k]}
				if sharded {
					return []int{p[0] / 10, p[1] / 12, p[2] / 6, p[0] % 10 / 5, p[1] % 12 / 4, p[2] % 6 / 3}
				}
				return []int{p[0] / 5, p[1] / 4, p[2] / 3}
			}
			slices.SortStableFunc(perm, func(x, y int) int { return slices.Compare(unit(x), unit(y)) })
			for i, k := range perm {
				for d := range 3 {
					grouped[d][i] = coords[d][k]
				}
			}
			for _, cached := range []bool{false, true} {
				var oo []zarr.Option
				if cached {
					oo = append(oo, zarr.WithCache(cache.NewLRU(16<<20)))
				}
				a, err := zarr.OpenArray(ctx, st, "a", oo...)
				if err != nil {
					t.Fatal(err)
				}
				for round, cs := range [][][]int{coords, grouped, coords} { // the last: from the cache, when cached
					got, _, err := a.ReadPointsBytes(ctx, cs)
					if err != nil {
						t.Fatal(err)
					}
					for k := range n {
						i := (cs[0][k]*shape[1]+cs[1][k])*shape[2] + cs[2][k]
						if want := all[i*item : (i+1)*item]; !bytes.Equal(got[k*item:(k+1)*item], want) {
							t.Fatalf("%s, cached %v, round %d: point %d (%d, %d, %d) = %v, want %v", name, cached, round, k, cs[0][k], cs[1][k], cs[2][k], got[k*item:(k+1)*item], want)
						}
					}
				}
			}
		}
	}
}

// TestPointListsMatchPoints reads coordinate lists through
// zarr.Array.ReadPointsBytes (the lists normalised as they are grouped:
// pipeline.ReadPointLists) and through Array.Points and
// ReadPointsSelection, and compares values and errors: negative
// coordinates, repeats, lists that broadcast, out-of-bounds coordinates
// (the largest and smallest ints too), few points and many (on more
// than one goroutine), dimensions short beside the points (the tables)
// and long (point by point).
func TestPointListsMatchPoints(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		shape, chunk []int
		shards       []int
	}{
		{[]int{23, 19, 11}, []int{5, 4, 3}, nil},
		{[]int{23, 19, 11}, []int{5, 4, 3}, []int{10, 12, 6}},
		{[]int{4000, 3}, []int{1000, 3}, nil},           // long dimensions: point by point
		{[]int{4000, 6}, []int{500, 3}, []int{1000, 6}}, // the same, sharded
		{[]int{40, 30, 20, 10}, []int{20, 10, 10, 5}, nil},
	} {
		var opts []zarr.MetadataOption
		if c.shards != nil {
			opts = append(opts, zarr.Shards(c.shards...))
		}
		meta, err := zarr.NewArrayMetadata(c.shape, dtype.TypeInt32, c.chunk, opts...)
		if err != nil {
			t.Fatal(err)
		}
		st := mem.New()
		a, err := zarr.CreateArray(ctx, st, "a", meta)
		if err != nil {
			t.Fatal(err)
		}
		vals := make([]byte, 4*nd.NumElements(c.shape))
		for i := range vals {
			vals[i] = byte(i*5 + i/4)
		}
		if err := a.WriteBytes(ctx, vals); err != nil {
			t.Fatal(err)
		}
		rank := len(c.shape)
		r := rand.New(rand.NewPCG(uint64(rank), uint64(c.shape[0])))
		for round := range 40 {
			n := []int{0, 1, 64, 65, 300, 5000, 20000}[round%7]
			lists := make([][]int, rank)
			for d := range lists {
				lists[d] = make([]int, n)
				for k := range lists[d] {
					lists[d][k] = r.IntN(2*c.shape[d]) - c.shape[d] // negative half the time
				}
			}
			if round%5 == 3 && n > 0 { // one coordinate out of bounds
				bad := []int{c.shape[0], -c.shape[0] - 1, math.MaxInt, math.MinInt}[round%4]
				lists[r.IntN(rank)][r.IntN(n)] = bad
			}
			if round%9 == 8 { // a list that broadcasts
				lists[0] = lists[0][:min(1, n)]
			}
			got, shape, err := a.ReadPointsBytes(ctx, lists)
			pts, perr := a.Points(lists)
			if (err == nil) != (perr == nil) || err != nil && !strings.Contains(err.Error(), perr.Error()) {
				t.Fatalf("%v round %d: error %v, Points' %v", c.shape, round, err, perr)
			}
			if err != nil {
				continue
			}
			want := make([]byte, 4*pts.Len())
			if err := a.ReadPointsSelection(ctx, want, pts); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) || !slices.Equal(shape, []int{pts.Len()}) {
				t.Fatalf("%v round %d: %d points (shape %v) differ from those of Points", c.shape, round, pts.Len(), shape)
			}
			typed, err := zarr.ReadPoints[int32](ctx, a, lists)
			if err != nil || len(typed) != pts.Len() {
				t.Fatalf("%v round %d: %d typed values, %v", c.shape, round, len(typed), err)
			}
			for k, v := range typed {
				if w := int32(binary.LittleEndian.Uint32(want[4*k:])); v != w {
					t.Fatalf("%v round %d: typed point %d = %d, want %d", c.shape, round, k, v, w)
				}
			}
		}
	}
}

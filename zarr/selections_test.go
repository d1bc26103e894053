package zarr_test

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/gozarr/gozarr/cache"
	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/mem"
	"github.com/gozarr/gozarr/zarr"
)

// countDecodes counts the decodes of the test codec "gozarr.test.count", a
// bytes-to-bytes identity that the selection tests put in inner chains.
var countDecodes atomic.Int64

type countCodec struct{}

func (countCodec) Name() string       { return "gozarr.test.count" }
func (countCodec) Configuration() any { return nil }
func (countCodec) Encode(dst, src []byte) ([]byte, error) {
	return append(dst, src...), nil
}
func (countCodec) Decode(dst, src []byte, limit int) ([]byte, error) {
	countDecodes.Add(1)
	if len(src) > limit {
		return nil, codecs.ErrCorrupt
	}
	return append(dst, src...), nil
}
func (countCodec) MaxEncodedSize(n int) int { return n }

func init() {
	codecs.Register("gozarr.test.count", func(json.RawMessage) (codecs.Codec, error) { return countCodec{}, nil })
}

// selLayout is one storage layout the selection tests run on.
type selLayout struct {
	name  string
	opts  []zarr.MetadataOption
	chunk []int
	cache bool
}

func selLayouts() []selLayout {
	return []selLayout{
		{name: "chunks-zstd", chunk: []int{4, 5, 3}, opts: []zarr.MetadataOption{zarr.Compress(zstdCodec())}},
		{name: "chunks-raw", chunk: []int{4, 5, 3}},
		{name: "shards-zstd", chunk: []int{4, 5, 3}, opts: []zarr.MetadataOption{zarr.Shards(8, 10, 6), zarr.Compress(zstdCodec())}},
		{name: "shards-raw", chunk: []int{4, 5, 3}, opts: []zarr.MetadataOption{zarr.Shards(8, 10, 6)}},
		{name: "shards-cached", chunk: []int{4, 5, 3}, opts: []zarr.MetadataOption{zarr.Shards(8, 10, 6)}, cache: true},
		{name: "chunks-cached", chunk: []int{4, 5, 3}, cache: true},
	}
}

func zstdCodec() codecs.BytesToBytes {
	c, err := codecs.NewZstd(1, false)
	if err != nil {
		panic(err)
	}
	return c
}

// makeSelArray creates a 13×17×7 int32 array holding its C-order index, the
// last chunk row of dimension 0 left unwritten (fill 0) so missing chunks are
// read too.
func makeSelArray(t *testing.T, l selLayout) (*zarr.Array, []int32) {
	t.Helper()
	ctx := context.Background()
	shape := []int{13, 17, 7}
	meta, err := zarr.NewArrayMetadata(shape, dtype.TypeInt32, l.chunk, l.opts...)
	if err != nil {
		t.Fatal(err)
	}
	var opts []zarr.Option
	if l.cache {
		opts = append(opts, zarr.WithCache(cache.NewLRU(1<<20)))
	}
	a, err := zarr.CreateArray(ctx, mem.New(), "a", meta, opts...)
	if err != nil {
		t.Fatal(err)
	}
	vals := make([]int32, nd.NumElements(shape))
	rows := 8 // rows [8, 13) stay missing
	for i := range rows * 17 * 7 {
		vals[i] = int32(i + 1)
	}
	if err := zarr.Write(ctx, a, vals[:rows*17*7], nd.Range(0, rows)); err != nil {
		t.Fatal(err)
	}
	return a, vals
}

// randomOrthItem draws one orthogonal item for a dimension of length n and
// the indices it takes (nil for a dropped integer index: one index).
func randomOrthItem(r *rand.Rand, n int) (nd.Item, []int, bool) {
	switch r.IntN(6) {
	case 0:
		i := r.IntN(n)
		if r.IntN(2) == 0 {
			return nd.Index(i - n), []int{i}, true
		}
		return nd.Index(i), []int{i}, true
	case 1:
		start, stop, step := r.IntN(n+2)-1, r.IntN(n+2)-1, r.IntN(5)+1
		if r.IntN(2) == 0 {
			step = -step
		}
		var idx []int
		lo, hi := start, stop
		norm := func(v int) int {
			if v < 0 {
				v += n
			}
			return v
		}
		lo, hi = norm(lo), norm(hi)
		if step > 0 {
			lo, hi = max(lo, 0), min(hi, n)
			for i := lo; i < hi; i += step {
				idx = append(idx, i)
			}
		} else {
			lo, hi = min(lo, n-1), max(hi, -1)
			for i := lo; i > hi; i += step {
				idx = append(idx, i)
			}
		}
		return nd.Slice(start, stop, step), idx, false
	case 2, 3:
		k := r.IntN(2 * n)
		idx := make([]int, k)
		in := make([]int, k)
		for j := range idx {
			idx[j] = r.IntN(n)
			in[j] = idx[j]
			if r.IntN(3) == 0 {
				in[j] -= n
			}
		}
		return nd.IndexArray(in...), idx, false
	case 4:
		m := make([]bool, n)
		var idx []int
		for i := range m {
			if m[i] = r.IntN(3) == 0; m[i] {
				idx = append(idx, i)
			}
		}
		return nd.Mask(m), idx, false
	}
	return nd.All(), seq(n), false
}

func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

func TestOrthogonalReadsMatchNaive(t *testing.T) {
	ctx := context.Background()
	shape := []int{13, 17, 7}
	for _, l := range selLayouts() {
		t.Run(l.name, func(t *testing.T) {
			a, vals := makeSelArray(t, l)
			r := rand.New(rand.NewPCG(1, uint64(len(l.name))))
			for round := range 150 {
				items := make([]nd.Item, 3)
				idx := make([][]int, 3)
				var shapeWant []int
				for d := range 3 {
					var drop bool
					items[d], idx[d], drop = randomOrthItem(r, shape[d])
					if !drop {
						shapeWant = append(shapeWant, len(idx[d]))
					}
				}
				got, gotShape, err := a.ReadBytes(ctx, items...)
				if err != nil {
					t.Fatalf("round %d %v: %v", round, items, err)
				}
				if !slices.Equal(gotShape, shapeWant) && !(len(gotShape) == 0 && len(shapeWant) == 0) {
					t.Fatalf("round %d %v: shape %v, want %v", round, items, gotShape, shapeWant)
				}
				k := 0
				for _, i := range idx[0] {
					for _, j := range idx[1] {
						for _, m := range idx[2] {
							want := vals[(i*17+j)*7+m]
							if g := int32(binary.LittleEndian.Uint32(got[4*k:])); g != want {
								t.Fatalf("round %d %v: element %d (%d,%d,%d) = %d, want %d", round, items, k, i, j, m, g, want)
							}
							k++
						}
					}
				}
				if k*4 != len(got) {
					t.Fatalf("round %d: %d bytes for %d elements", round, len(got), k)
				}
			}
		})
	}
}

func TestOrthogonalWritesLastWins(t *testing.T) {
	ctx := context.Background()
	shape := []int{13, 17, 7}
	for _, l := range selLayouts() {
		t.Run(l.name, func(t *testing.T) {
			a, vals := makeSelArray(t, l)
			r := rand.New(rand.NewPCG(2, uint64(len(l.name))))
			for round := range 40 {
				items := make([]nd.Item, 3)
				idx := make([][]int, 3)
				for d := range 3 {
					items[d], idx[d], _ = randomOrthItem(r, shape[d])
				}
				n := len(idx[0]) * len(idx[1]) * len(idx[2])
				data := make([]int32, n)
				k := 0
				for _, i := range idx[0] {
					for _, j := range idx[1] {
						for _, m := range idx[2] {
							data[k] = int32(-1000*round - k)
							vals[(i*17+j)*7+m] = data[k] // C order: the last write wins
							k++
						}
					}
				}
				if err := zarr.Write(ctx, a, data, items...); err != nil {
					t.Fatalf("round %d %v: %v", round, items, err)
				}
				all, _, err := zarr.Read[int32](ctx, a)
				if err != nil {
					t.Fatal(err)
				}
				if i := firstDiff(all, vals); i >= 0 {
					t.Fatalf("round %d %v: element %d = %d, want %d", round, items, i, all[i], vals[i])
				}
			}
		})
	}
}

func firstDiff(a, b []int32) int {
	for i := range a {
		if a[i] != b[i] {
			return i
		}
	}
	if len(a) != len(b) {
		return min(len(a), len(b))
	}
	return -1
}

func TestPointsMatchNaive(t *testing.T) {
	ctx := context.Background()
	shape := []int{13, 17, 7}
	for _, l := range selLayouts() {
		t.Run(l.name, func(t *testing.T) {
			a, vals := makeSelArray(t, l)
			r := rand.New(rand.NewPCG(3, uint64(len(l.name))))
			for round := range 60 {
				n := r.IntN(300)
				coords := make([][]int, 3)
				for d := range 3 {
					if r.IntN(8) == 0 { // broadcast one coordinate
						coords[d] = []int{r.IntN(shape[d])}
						continue
					}
					coords[d] = make([]int, n)
					for k := range n {
						coords[d][k] = r.IntN(shape[d])
						if r.IntN(4) == 0 {
							coords[d][k] -= shape[d]
						}
					}
				}
				pts, err := a.Points(coords)
				if err != nil {
					t.Fatal(err)
				}
				got, err := zarr.ReadPoints[int32](ctx, a, coords)
				if err != nil {
					t.Fatalf("round %d: %v", round, err)
				}
				if len(got) != pts.Len() {
					t.Fatalf("round %d: %d values for %d points", round, len(got), pts.Len())
				}
				for k := range pts.Len() {
					p := pts.At(k)
					if want := vals[(p[0]*17+p[1])*7+p[2]]; got[k] != want {
						t.Fatalf("round %d: point %d %v = %d, want %d", round, k, p, got[k], want)
					}
				}
				// Writes: the last value of a repeated point wins.
				data := make([]int32, pts.Len())
				for k := range data {
					data[k] = int32(-round*1000 - k)
					p := pts.At(k)
					vals[(p[0]*17+p[1])*7+p[2]] = data[k]
				}
				if err := zarr.WritePoints(ctx, a, data, coords); err != nil {
					t.Fatal(err)
				}
				all, _, err := zarr.Read[int32](ctx, a)
				if err != nil {
					t.Fatal(err)
				}
				if i := firstDiff(all, vals); i >= 0 {
					t.Fatalf("round %d: after WritePoints element %d = %d, want %d", round, i, all[i], vals[i])
				}
			}
		})
	}
}

func TestMaskSelection(t *testing.T) {
	ctx := context.Background()
	for _, l := range selLayouts()[:3] {
		t.Run(l.name, func(t *testing.T) {
			a, vals := makeSelArray(t, l)
			mask := make([]bool, len(vals))
			var want []int32
			for i := range mask {
				if mask[i] = i%7 == 3 || i%11 == 0; mask[i] {
					want = append(want, vals[i])
				}
			}
			b, shape, err := a.ReadMaskBytes(ctx, mask)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(shape, []int{len(want)}) {
				t.Fatalf("shape %v, want [%d]", shape, len(want))
			}
			for k, w := range want {
				if g := int32(binary.LittleEndian.Uint32(b[4*k:])); g != w {
					t.Fatalf("element %d = %d, want %d", k, g, w)
				}
			}
			typed, err := zarr.ReadMask[int32](ctx, a, mask)
			if err != nil || !slices.Equal(typed, want) {
				t.Fatalf("ReadMask[int32] = %v, %v; want %v", typed, err, want)
			}
			if _, err := zarr.ReadMask[float32](ctx, a, mask); !errors.Is(err, zarr.ErrTypeMismatch) {
				t.Fatalf("ReadMask[float32] of int32: %v, want ErrTypeMismatch", err)
			}
			data := make([]byte, len(b))
			for k := range want {
				binary.LittleEndian.PutUint32(data[4*k:], uint32(7000+k))
			}
			if err := a.WriteMaskBytes(ctx, data, mask); err != nil {
				t.Fatal(err)
			}
			k := 0
			for i := range mask {
				if mask[i] {
					vals[i] = int32(7000 + k)
					k++
				}
			}
			all, _, err := zarr.Read[int32](ctx, a)
			if err != nil {
				t.Fatal(err)
			}
			if i := firstDiff(all, vals); i >= 0 {
				t.Fatalf("after WriteMask element %d = %d, want %d", i, all[i], vals[i])
			}
			if _, _, err := a.ReadMaskBytes(ctx, mask[1:]); !errors.Is(err, nd.ErrInvalidSelection) {
				t.Fatalf("short mask: err = %v, want ErrInvalidSelection", err)
			}
		})
	}
}

func TestSelectionErrors(t *testing.T) {
	ctx := context.Background()
	a, _ := makeSelArray(t, selLayouts()[0])
	cases := []struct {
		items []nd.Item
		want  error
	}{
		{[]nd.Item{nd.IndexArray(0, 13)}, nd.ErrOutOfBounds},
		{[]nd.Item{nd.IndexArray(-14)}, nd.ErrOutOfBounds},
		{[]nd.Item{nd.Mask(make([]bool, 12))}, nd.ErrInvalidSelection},
	}
	for _, c := range cases {
		if _, _, err := a.ReadBytes(ctx, c.items...); !errors.Is(err, c.want) {
			t.Errorf("%v: err = %v, want %v", c.items, err, c.want)
		}
	}
	pcases := []struct {
		coords [][]int
		want   error
	}{
		{[][]int{{0}, {0}}, nd.ErrInvalidSelection},
		{[][]int{{0, 1}, {0, 1, 2}, {0}}, nd.ErrInvalidSelection},
		{[][]int{{13}, {0}, {0}}, nd.ErrOutOfBounds},
		{[][]int{{0}, {-18}, {0}}, nd.ErrOutOfBounds},
	}
	for _, c := range pcases {
		if _, _, err := a.ReadPointsBytes(ctx, c.coords); !errors.Is(err, c.want) {
			t.Errorf("%v: err = %v, want %v", c.coords, err, c.want)
		}
	}
	// Empty index arrays select nothing, without error.
	b, shape, err := a.ReadBytes(ctx, nd.IndexArray(), nd.All())
	if err != nil || len(b) != 0 || !slices.Equal(shape, []int{0, 17, 7}) {
		t.Errorf("empty index array: %d bytes, shape %v, %v", len(b), shape, err)
	}
	b, shape, err = a.ReadPointsBytes(ctx, [][]int{{}, {}, {}})
	if err != nil || len(b) != 0 || !slices.Equal(shape, []int{0}) {
		t.Errorf("no points: %d bytes, shape %v, %v", len(b), shape, err)
	}
}

func TestBlockItems(t *testing.T) {
	ctx := context.Background()
	a, vals := makeSelArray(t, selLayouts()[2]) // shards of 8×10×6
	items, err := a.BlockItems(nd.Index(1), nd.Range(0, 2), nd.Index(-1))
	if err != nil {
		t.Fatal(err)
	}
	got, shape, err := zarr.Read[int32](ctx, a, items...)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(shape, []int{5, 17, 1}) {
		t.Fatalf("shape %v, want [5 17 1] (edge blocks clipped)", shape)
	}
	k := 0
	for i := 8; i < 13; i++ {
		for j := range 17 {
			if want := vals[(i*17+j)*7+6]; got[k] != want {
				t.Fatalf("(%d,%d,6) = %d, want %d", i, j, got[k], want)
			}
			k++
		}
	}
	if _, err := a.BlockItems(nd.Every(-1)); !errors.Is(err, nd.ErrInvalidSelection) {
		t.Errorf("stepped block slice: err = %v", err)
	}
	if _, err := a.BlockItems(nd.Index(2)); !errors.Is(err, nd.ErrOutOfBounds) {
		t.Errorf("block past the grid: err = %v", err)
	}
}

// TestGatherDecodesEachInnerChunkOnce counts decodes: random rows and random
// points, asked in any order with repeats, decode every touched inner chunk
// exactly once.
func TestGatherDecodesEachInnerChunkOnce(t *testing.T) {
	ctx := context.Background()
	shape := []int{64, 48, 10}
	inner := []int{4, 6, 5}
	for _, local := range []bool{true, false} {
		t.Run(fmt.Sprintf("whole-shard-reads=%v", local), func(t *testing.T) {
			meta, err := zarr.NewArrayMetadata(shape, dtype.TypeUint16, inner, zarr.Shards(16, 24, 10), zarr.Compress(countCodec{}))
			if err != nil {
				t.Fatal(err)
			}
			var st store.Store = mem.New()
			if !local {
				st = remoteView{st}
			}
			a, err := zarr.CreateArray(ctx, st, "a", meta)
			if err != nil {
				t.Fatal(err)
			}
			vals := make([]uint16, nd.NumElements(shape))
			for i := range vals {
				vals[i] = uint16(i)
			}
			if err := zarr.Write(ctx, a, vals); err != nil {
				t.Fatal(err)
			}
			r := rand.New(rand.NewPCG(4, 5))
			rows := make([]int, 40)
			for i := range rows {
				rows[i] = r.IntN(shape[0])
			}
			cols := []int{47, 3, 3, 20}
			touched := map[[3]int]bool{}
			for _, i := range rows {
				for _, j := range cols {
					for m := range shape[2] {
						touched[[3]int{i / inner[0], j / inner[1], m / inner[2]}] = true
					}
				}
			}
			countDecodes.Store(0)
			if _, _, err := a.ReadBytes(ctx, nd.IndexArray(rows...), nd.IndexArray(cols...)); err != nil {
				t.Fatal(err)
			}
			if got := countDecodes.Load(); got != int64(len(touched)) {
				t.Errorf("orthogonal gather: %d decodes, %d inner chunks touched", got, len(touched))
			}
			coords := [][]int{make([]int, 500), make([]int, 500), make([]int, 500)}
			touched = map[[3]int]bool{}
			for k := range 500 {
				for d := range 3 {
					coords[d][k] = r.IntN(shape[d])
				}
				touched[[3]int{coords[0][k] / inner[0], coords[1][k] / inner[1], coords[2][k] / inner[2]}] = true
			}
			countDecodes.Store(0)
			got, err := zarr.ReadPoints[uint16](ctx, a, coords)
			if err != nil {
				t.Fatal(err)
			}
			if n := countDecodes.Load(); n != int64(len(touched)) {
				t.Errorf("points: %d decodes, %d inner chunks touched", n, len(touched))
			}
			for k := range got {
				if want := vals[(coords[0][k]*48+coords[1][k])*10+coords[2][k]]; got[k] != want {
					t.Fatalf("point %d = %d, want %d", k, got[k], want)
				}
			}
		})
	}
}

// remoteView hides the memory store's local capabilities (whole-shard
// reads), so reads go through shard indexes and ranged reads, as on S3.
type remoteView struct{ store.Store }

func TestReadViewIntoLargerBuffer(t *testing.T) {
	ctx := context.Background()
	a, vals := makeSelArray(t, selLayouts()[2])
	// A batch of 4 × 17 rows; fill rows 1 and 3 from element (i, :, 2) of
	// rows 5 and 2 (the middle dimension dropped... the last, here).
	buf := make([]byte, 4*17*4)
	batch := nd.Contiguous(buf, []int{4, 17}, 4)
	for k, i := range map[int]int{1: 5, 3: 2} {
		dst := batch.Slice([]int{k, 0}, []int{1, 17}, []int{1, 1})
		dst.Shape, dst.Strides = dst.Shape[1:], dst.Strides[1:] // one row: [17]
		if err := a.ReadView(ctx, dst, nd.Index(i), nd.All(), nd.Index(2)); err != nil {
			t.Fatal(err)
		}
	}
	for k, i := range map[int]int{1: 5, 3: 2} {
		for j := range 17 {
			if g := int32(binary.LittleEndian.Uint32(buf[4*(k*17+j):])); g != vals[(i*17+j)*7+2] {
				t.Fatalf("batch row %d col %d = %d, want %d", k, j, g, vals[(i*17+j)*7+2])
			}
		}
	}
	for _, row := range []int{0, 2} {
		for j := range 17 {
			if g := binary.LittleEndian.Uint32(buf[4*(row*17+j):]); g != 0 {
				t.Fatalf("batch row %d col %d written (%d)", row, j, g)
			}
		}
	}
	// A view that does not fit is an error, nothing written past it.
	short := nd.View{Data: buf[:10], Shape: []int{17}, Strides: []int{4}, ItemSize: 4}
	if err := a.ReadView(ctx, short, nd.Index(0), nd.All(), nd.Index(0)); !errors.Is(err, nd.ErrInvalidSelection) {
		t.Fatalf("short view: %v", err)
	}
	if err := a.ReadView(ctx, batch, nd.Index(0)); !errors.Is(err, nd.ErrInvalidSelection) {
		t.Fatalf("wrong shape: %v", err)
	}
}

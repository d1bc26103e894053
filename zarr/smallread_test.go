package zarr_test

import (
	"context"
	"encoding/binary"
	"errors"
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/gozarr/gozarr/cache"
	"github.com/gozarr/gozarr/internal/npy"
	"github.com/gozarr/gozarr/internal/refdata"
	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/store/fs"
	"github.com/gozarr/gozarr/store/s3"
	"github.com/gozarr/gozarr/store/s3/s3test"
	"github.com/gozarr/gozarr/zarr"
)

// TestSmallReads reads every reference array element by element, in a few
// points and small boxes, through the small-read fast path (no cache, a
// cold chunk cache, a warm one: lookups and copies with no engine), and
// compares with zarr-python's values.
func TestSmallReads(t *testing.T) {
	ctx := context.Background()
	for _, c := range refdata.Cases(t) {
		if nd.NumElements(c.Shape) == 0 || len(c.Shape) == 0 {
			continue
		}
		t.Run(c.Name, func(t *testing.T) {
			want := c.ExpectedArray(t)
			probe := openRef(t, c)
			dt := probe.Metadata().DataType
			if dt.Size() == 0 {
				t.Skip("variable-length data type")
			}
			if _, _, err := probe.ReadBytes(ctx, fullIndex(c.Shape, 0)...); err != nil {
				t.Skipf("not read as bytes: %v", err)
			}
			item := dt.Size()
			n := nd.NumElements(c.Shape)
			for _, mode := range []string{"nocache", "cold", "warm"} {
				var opts []zarr.Option
				if mode != "nocache" {
					opts = append(opts, zarr.WithCache(cache.NewLRU(64<<20)))
				}
				st, err := fs.New(refDir, fs.ReadOnly())
				if err != nil {
					t.Fatal(err)
				}
				a, err := zarr.OpenArray(ctx, st, c.Path, opts...)
				if err != nil {
					t.Fatal(err)
				}
				if mode == "warm" {
					if _, _, err := a.ReadBytes(ctx); err != nil {
						t.Fatal(err)
					}
				}
				step := max(1, n/300)
				out := make([]byte, item)
				for k := 0; k < n; k += step {
					items := fullIndex(c.Shape, k)
					if k%2 == 1 { // negative indices count from the end
						for d, it := range items {
							i, _ := it.IsIndex()
							items[d] = nd.Index(i - c.Shape[d])
						}
					}
					if err := a.ReadBytesInto(ctx, out, items...); err != nil {
						t.Fatalf("%s: element %d: %v", mode, k, err)
					}
					if i, ok := sameValues(dt, out, want.Data[k*item:(k+1)*item]); !ok {
						t.Fatalf("%s: element %d differs (%d)", mode, k, i)
					}
				}
				rng := rand.New(rand.NewPCG(uint64(n), 7))
				for range 10 {
					// A few points, some repeated, then a small box.
					np := 1 + rng.IntN(12)
					coords := make([][]int, len(c.Shape))
					var exp []byte
					for range np {
						k := rng.IntN(n)
						for d, it := range fullIndex(c.Shape, k) {
							i, _ := it.IsIndex()
							coords[d] = append(coords[d], i)
						}
						exp = append(exp, want.Data[k*item:(k+1)*item]...)
					}
					got, _, err := a.ReadPointsBytes(ctx, coords)
					if err != nil {
						t.Fatalf("%s: points %v: %v", mode, coords, err)
					}
					if i, ok := sameValues(dt, got, exp); !ok {
						t.Fatalf("%s: points %v differ at %d", mode, coords, i)
					}
					box := make([]nd.Item, len(c.Shape))
					for d, s := range c.Shape {
						lo := rng.IntN(s)
						box[d] = nd.Range(lo, lo+1+rng.IntN(min(s-lo, 9)))
					}
					sel, err := nd.Normalize(box, c.Shape)
					if err != nil {
						t.Fatal(err)
					}
					gotBox, _, err := a.ReadBytes(ctx, box...)
					if err != nil {
						t.Fatalf("%s: box %v: %v", mode, sel, err)
					}
					wantBox := gather(want.Data, c.Shape, item, sel)
					if i, ok := sameValues(dt, gotBox, wantBox); !ok {
						t.Fatalf("%s: box %v differs at element %d", mode, sel, i)
					}
					// Into a buffer of the caller's: the cached-box fast
					// path when the cache holds the box's units.
					into := make([]byte, len(wantBox))
					if err := a.ReadBytesInto(ctx, into, box...); err != nil {
						t.Fatalf("%s: box %v into a buffer: %v", mode, sel, err)
					}
					if i, ok := sameValues(dt, into, wantBox); !ok {
						t.Fatalf("%s: box %v into a buffer differs at element %d", mode, sel, i)
					}
				}
			}
		})
	}
}

// fullIndex returns the integer items of the k-th element in C order.
func fullIndex(shape []int, k int) []nd.Item {
	items := make([]nd.Item, len(shape))
	for d := len(shape) - 1; d >= 0; d-- {
		items[d] = nd.Index(k % shape[d])
		k /= shape[d]
	}
	return items
}

// TestSmallReadErrors: the fast path refuses what the general path does.
func TestSmallReadErrors(t *testing.T) {
	ctx := context.Background()
	a := openRef(t, refdata.Lookup(t, "v3_shard_end_edges"))
	shape := a.Shape()
	out := make([]byte, a.Metadata().DataType.Size())
	if err := a.ReadBytesInto(ctx, out, nd.Index(shape[0]), nd.Index(0)); !errors.Is(err, nd.ErrOutOfBounds) {
		t.Errorf("index past the end: %v, want nd.ErrOutOfBounds", err)
	}
	if err := a.ReadBytesInto(ctx, out, nd.Index(-shape[0]-1), nd.Index(0)); !errors.Is(err, nd.ErrOutOfBounds) {
		t.Errorf("index before the start: %v, want nd.ErrOutOfBounds", err)
	}
	if err := a.ReadBytesInto(ctx, out[:0], nd.Index(0), nd.Index(0)); err == nil {
		t.Error("an output of 0 bytes for one element: no error")
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := a.ReadBytesInto(cctx, out, nd.Index(0), nd.Index(0)); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v, want context.Canceled", err)
	}
}

// TestS3PointEconomy counts the requests of single-element reads of a
// sharded array on S3: a cold point costs the shard's index (one suffix
// GET) and its inner chunk (one ranged GET); a point of another inner
// chunk of that shard, one ranged GET; with a chunk cache, a point of a
// cached inner chunk, none.
func TestS3PointEconomy(t *testing.T) {
	ctx := context.Background()
	srv, ok := s3test.LookupEnv()
	if !ok {
		srv = s3test.NewFake(t, "gozarr")
	}
	const name = "v3_shard_end_edges" // float32 [54 40], shards [24 21], inner [8 7], index at end
	uploadRef(t, srv, "points", name)
	want, err := npy.ReadFile(filepath.Join(refDir, name+".npy"))
	if err != nil {
		t.Fatal(err)
	}
	for _, cached := range []bool{false, true} {
		rec := s3test.NewRecorder(nil)
		st, err := s3.Open(ctx, srv.Bucket, "points", srv.Options(s3.WithHTTPClient(rec.Client()))...)
		if err != nil {
			t.Fatal(err)
		}
		var opts []zarr.Option
		if cached {
			opts = append(opts, zarr.WithCache(cache.NewLRU(1<<20)))
		}
		a, err := zarr.OpenArray(ctx, st, name+".zarr", opts...)
		if err != nil {
			t.Fatal(err)
		}
		read := func(i, j int) int {
			t.Helper()
			rec.Reset()
			var out [1]float32
			if err := zarr.ReadInto(ctx, a, out[:], nd.Index(i), nd.Index(j)); err != nil {
				t.Fatal(err)
			}
			k := (i*want.Shape[1] + j) * 4
			got := binary.LittleEndian.AppendUint32(nil, math.Float32bits(out[0]))
			if _, ok := sameValues(a.Metadata().DataType, got, want.Data[k:k+4]); !ok {
				t.Fatalf("point (%d, %d) = %v differs from the .npy", i, j, out[0])
			}
			return len(rec.Requests(""))
		}
		if n := read(9, 8); n != 2 || rec.Count("GET") != 2 {
			t.Fatalf("cached %v: cold point: %d requests %v, want 2 (index, inner chunk)", cached, n, rec.Requests(""))
		}
		if n := read(17, 1); n != 1 {
			t.Errorf("cached %v: point of another inner chunk of a warm shard: %d requests, want 1", cached, n)
		}
		wantAgain := 1
		if cached {
			wantAgain = 0
		}
		if n := read(10, 13); n != wantAgain {
			t.Errorf("cached %v: point of the first inner chunk again: %d requests, want %d", cached, n, wantAgain)
		}
	}
}

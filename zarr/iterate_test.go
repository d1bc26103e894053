package zarr_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/store/mem"
	"github.com/gozarr/gozarr/zarr"
)

func TestTileShape(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name          string
		shape, chunks []int
		codecs        string
		budget        int64
		want          []int
	}{
		// Rows of 30 float32 = 120 bytes; chunks of 8 rows = 960 bytes.
		{"whole array", []int{50, 30}, []int{8, 16}, plainZstd, 1 << 20, []int{50, 30}},
		{"chunk rows", []int{50, 30}, []int{8, 16}, plainZstd, 2 * 2000, []int{16, 30}},
		{"one chunk row", []int{50, 30}, []int{8, 16}, plainZstd, 2 * 960, []int{8, 30}},
		{"chunk boxes", []int{50, 30}, []int{8, 16}, plainZstd, 2 * 600, []int{8, 16}},
		{"below a chunk", []int{50, 30}, []int{8, 16}, plainZstd, 2 * 250, []int{2, 30}},
		{"one element", []int{50, 30}, []int{8, 16}, plainZstd, 2, []int{1, 1}},
		{"inner chunks", []int{64, 64}, []int{32, 32}, fmt.Sprintf(shardZstd, "[8,8]"), 2 * 8 * 64 * 4, []int{8, 64}},
		{"inner boxes", []int{64, 64}, []int{32, 32}, fmt.Sprintf(shardZstd, "[8,8]"), 2 * 8 * 40 * 4, []int{8, 40}},
		// Inner shards of 16² (1 KiB) do not fit half the budget; their
		// 8² inner chunks do: tiles of whole innermost chunks.
		{"innermost chunks of nested shards", []int{64, 64}, []int{32, 32}, nestedZstd, 2 * 512, []int{8, 16}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := mem.New()
			newFloatArray(t, st, "a", tc.shape, tc.chunks, tc.codecs)
			a, err := zarr.OpenArray(ctx, st, "a")
			if err != nil {
				t.Fatal(err)
			}
			if got := a.TileShape(tc.budget); !slices.Equal(got, tc.want) {
				t.Errorf("TileShape(%d) = %v, want %v", tc.budget, got, tc.want)
			}
		})
	}
}

// settle waits for the goroutine count to drop to at most n, and reports
// whether it did.
func settle(n int) bool {
	for range 200 {
		if runtime.NumGoroutine() <= n {
			return true
		}
		runtime.Gosched()
		time.Sleep(5 * time.Millisecond)
	}
	return false
}

// TestBlocksCoverOnce: every element is yielded exactly once with its value.
func TestBlocksCoverOnce(t *testing.T) {
	ctx := context.Background()
	for _, lay := range append(layouts, struct {
		name   string
		shape  []int
		chunks []int
		codecs string
	}{"3d-sharded", []int{9, 20, 12}, []int{4, 8, 12}, fmt.Sprintf(shardZstd, "[2,4,6]")}) {
		for _, budget := range []int64{2, 1000, 5000, 1 << 20} {
			t.Run(fmt.Sprintf("%s/%d", lay.name, budget), func(t *testing.T) {
				st := mem.New()
				want := newFloatArray(t, st, "a", lay.shape, lay.chunks, lay.codecs)
				a, err := zarr.OpenArray(ctx, st, "a")
				if err != nil {
					t.Fatal(err)
				}
				seen := make([]int, nd.NumElements(lay.shape))
				full := nd.Contiguous(want, lay.shape, 4)
				tiles := 0
				for b, err := range a.Tiles(ctx, budget) {
					if err != nil {
						t.Fatal(err)
					}
					tiles++
					if int64(len(b.Data)) > max(budget/2, 4) {
						t.Fatalf("tile of %d bytes over half the budget %d", len(b.Data), budget)
					}
					count := make([]int, len(b.Shape))
					step := make([]int, len(b.Shape))
					for d := range count {
						count[d] = b.Stop[d] - b.Start[d]
						step[d] = 1
					}
					if !slices.Equal(count, b.Shape) {
						t.Fatalf("tile %v..%v has shape %v", b.Start, b.Stop, b.Shape)
					}
					exp := make([]byte, len(b.Data))
					nd.Copy(nd.Contiguous(exp, b.Shape, 4), full.Slice(b.Start, count, step))
					if !bytes.Equal(exp, b.Data) {
						t.Fatalf("tile %v..%v: wrong values", b.Start, b.Stop)
					}
					// Mark the tile's elements.
					for i := range nd.NumElements(b.Shape) {
						lin, rem := 0, i
						for d := len(b.Shape) - 1; d >= 0; d-- {
							c := b.Start[d] + rem%b.Shape[d]
							rem /= b.Shape[d]
							m := 1
							for _, s := range lay.shape[d+1:] {
								m *= s
							}
							lin += c * m
						}
						seen[lin]++
					}
				}
				for i, n := range seen {
					if n != 1 {
						t.Fatalf("element %d yielded %d times (%d tiles)", i, n, tiles)
					}
				}
			})
		}
	}
}

// TestBlocksStop: breaking out, cancelling and a read error all end the
// iteration with no goroutine left behind.
func TestBlocksStop(t *testing.T) {
	st := mem.New()
	newFloatArray(t, st, "a", []int{64, 64}, []int{8, 8}, plainZstd)
	a, err := zarr.OpenArray(context.Background(), st, "a")
	if err != nil {
		t.Fatal(err)
	}
	base := runtime.NumGoroutine()

	n := 0
	for _, err := range a.Tiles(context.Background(), 2*8*64*4) {
		if err != nil {
			t.Fatal(err)
		}
		if n++; n == 2 {
			break
		}
	}
	if !settle(base) {
		t.Errorf("after break: %d goroutines, want ≤ %d", runtime.NumGoroutine(), base)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var last error
	n = 0
	for _, err := range a.Tiles(ctx, 2*8*64*4) {
		if err != nil {
			last = err
			continue
		}
		if n++; n == 3 {
			cancel()
		}
	}
	if !errors.Is(last, context.Canceled) || n > 5 {
		t.Errorf("after cancel: %d tiles, last error %v", n, last)
	}
	if !settle(base) {
		t.Errorf("after cancel: %d goroutines, want ≤ %d", runtime.NumGoroutine(), base)
	}

	// A corrupt chunk: the error is yielded once, then the iteration ends.
	if err := st.Set(context.Background(), "a/c/3/0", []byte("not zstd")); err != nil {
		t.Fatal(err)
	}
	errs, ok := 0, 0
	for _, err := range a.Tiles(context.Background(), 2*8*64*4) {
		if err != nil {
			errs++
			if !errors.Is(err, codecs.ErrCorrupt) {
				t.Errorf("error %v, want codecs.ErrCorrupt", err)
			}
			continue
		}
		ok++
	}
	if errs != 1 || ok != 3 {
		t.Errorf("%d tiles then %d errors, want 3 then 1", ok, errs)
	}
	if !settle(base) {
		t.Errorf("after error: %d goroutines, want ≤ %d", runtime.NumGoroutine(), base)
	}
}

func TestBlocksEmptyAndScalar(t *testing.T) {
	ctx := context.Background()
	st := mem.New()
	newFloatArray(t, st, "e", []int{0, 5}, []int{2, 2}, plainZstd)
	newFloatArray(t, st, "s", []int{}, []int{}, plainZstd)
	e, _ := zarr.OpenArray(ctx, st, "e")
	for range e.Tiles(ctx, 0) {
		t.Error("empty array yielded a tile")
	}
	s, _ := zarr.OpenArray(ctx, st, "s")
	n := 0
	for b, err := range s.Tiles(ctx, 0) {
		if err != nil || len(b.Data) != 4 || len(b.Shape) != 0 {
			t.Errorf("scalar tile %+v, %v", b, err)
		}
		n++
	}
	if n != 1 {
		t.Errorf("%d scalar tiles", n)
	}
}

// nestedZstd is a shard of 16² inner shards of 8² zstd chunks.
var nestedZstd = `[{"name":"sharding_indexed","configuration":{"chunk_shape":[16,16],"codecs":` + fmt.Sprintf(shardZstd, "[8,8]") +
	`,"index_codecs":[{"name":"bytes","configuration":{"endian":"little"}}],"index_location":"start"}}]`

// TestUnits: the decode unit is the chunk, the inner chunk of a shard, or
// the innermost chunk through nested shards.
func TestUnits(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name                string
		codecs              string
		wantWrite, wantRead []int
	}{
		{"chunks", plainZstd, []int{32, 32}, []int{32, 32}},
		{"shards", fmt.Sprintf(shardZstd, "[8,16]"), []int{32, 32}, []int{8, 16}},
		{"nested shards", nestedZstd, []int{32, 32}, []int{8, 8}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := mem.New()
			want := newFloatArray(t, st, "a", []int{64, 64}, []int{32, 32}, tc.codecs)
			a, err := zarr.OpenArray(ctx, st, "a")
			if err != nil {
				t.Fatal(err)
			}
			w, r := a.Units()
			if !slices.Equal(w, tc.wantWrite) || !slices.Equal(r, tc.wantRead) {
				t.Errorf("Units() = %v, %v, want %v, %v", w, r, tc.wantWrite, tc.wantRead)
			}
			got, _, err := a.ReadBytes(ctx)
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("read: %v", err)
			}
		})
	}
}

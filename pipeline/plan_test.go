package pipeline_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/pipeline"
	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/mem"
	"github.com/gozarr/gozarr/zarr"
)

// layout is one of the chunk layouts the engine's tests run on.
type layout struct {
	name  string
	specs []codecs.Spec
}

// layouts returns plain zstd chunks, shards of inner chunks of shape
// inner, and nested shards (nestedSpecs), in that order.
func layouts(t *testing.T, inner []int) []layout {
	return []layout{{"chunks", zstdSpecs(t)}, {"shards", shardSpecs(t, inner)}, {"nested shards", nestedSpecs(t)}}
}

// nestedSpecs is a shard of inner shards of 4×4 zstd chunks.
func nestedSpecs(t *testing.T) []codecs.Spec {
	innerShard := map[string]any{
		"chunk_shape":  []int{4, 4},
		"codecs":       zstdSpecs(t),
		"index_codecs": []codecs.Spec{spec(t, "bytes", map[string]string{"endian": "little"})},
	}
	cfg := map[string]any{
		"chunk_shape":  []int{8, 8},
		"codecs":       []codecs.Spec{spec(t, "sharding_indexed", innerShard)},
		"index_codecs": []codecs.Spec{spec(t, "bytes", map[string]string{"endian": "little"}), spec(t, "crc32c", nil)},
	}
	return []codecs.Spec{spec(t, "sharding_indexed", cfg)}
}

// TestPlanReadUnits: a read assembled by hand from a plan's read units
// (each unit's byte range fetched and decoded with the innermost chain,
// its part placed at its place in the output; missing units filled) is
// the array's read, for chunks, shards and nested shards, with stored and
// missing units.
func TestPlanReadUnits(t *testing.T) {
	ctx := context.Background()
	for _, tc := range layouts(t, []int{4, 8}) {
		t.Run(tc.name, func(t *testing.T) {
			st, _ := makeArray(t, []int{40, 48}, []int{16, 16}, tc.specs)
			a, err := zarr.OpenArray(ctx, st, "a")
			if err != nil {
				t.Fatal(err)
			}
			// A chunk all fill: deleted (or its inner chunks not stored).
			if err := zarr.Write(ctx, a, make([]float32, 16*16), nd.Range(16, 32), nd.Range(16, 32)); err != nil {
				t.Fatal(err)
			}
			items := []nd.Item{nd.Slice(3, 37, 2), nd.Slice(-1, 5, -3)}
			want, shape, err := zarr.Read[float32](ctx, a, items...)
			if err != nil {
				t.Fatal(err)
			}
			plan, err := a.Plan(items...)
			if err != nil {
				t.Fatal(err)
			}
			got := make([]byte, 4*len(want))
			out := nd.Contiguous(got, plan.Selection().FullShape(), 4)
			chain := a.Chain()
			for l := a.Sharding(); l != nil; l = l.Nested() {
				chain = l.Inner()
			}
			units, missing := 0, 0
			for u, err := range plan.ReadUnits(ctx, st) {
				if err != nil {
					t.Fatal(err)
				}
				units++
				dst := u.Part.DstView(out)
				if u.Missing {
					missing++
					nd.Fill(dst, make([]byte, 4))
					continue
				}
				enc, err := st.Get(ctx, u.Key, u.Range)
				if errors.Is(err, store.ErrNotFound) && u.Inner == nil {
					missing++ // a chunk is found missing only when read
					nd.Fill(dst, make([]byte, 4))
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
				dec, err := chain.DecodeNew(enc)
				if err != nil {
					t.Fatalf("unit %s %v %v: %v", u.Key, u.Inner, u.Range, err)
				}
				nd.Copy(dst, u.Part.SrcView(nd.Contiguous(dec, chain.Repr().Shape, 4)))
			}
			if missing == 0 || missing == units {
				t.Fatalf("%d units, %d missing: the test wants both kinds", units, missing)
			}
			for i, v := range want {
				if g := f32At(got, i); g != v {
					t.Fatalf("shape %v: element %d: plan gives %v, Read %v", shape, i, g, v)
				}
			}
		})
	}
}

// TestPlanWriteUnits: write units are the touched chunks in C order, with
// their keys, and Whole where the selection covers them (at the array's
// edge, their part inside the array).
func TestPlanWriteUnits(t *testing.T) {
	st := mem.New()
	meta := &zarr.ArrayMetadata{Shape: []int{10, 10}, DataType: dtype.TypeUint8, ChunkShape: []int{4, 4},
		ChunkKeyEncoding: zarr.DefaultKeyEncoding(), FillValue: []byte{0}, Codecs: []codecs.Spec{spec(t, "bytes", nil)}}
	a, err := zarr.CreateArray(context.Background(), st, "a", meta)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := a.Plan(nd.Range(4, 10), nd.Range(3, 8))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for u := range plan.WriteUnits() {
		got = append(got, fmt.Sprintf("%s %v", u.Key, u.Whole))
	}
	want := []string{"a/c/1/0 false", "a/c/1/1 true", "a/c/2/0 false", "a/c/2/1 true"}
	if !slices.Equal(got, want) || plan.NumWriteUnits() != 4 {
		t.Fatalf("write units %v (%d), want %v", got, plan.NumWriteUnits(), want)
	}
}

// BenchmarkPlanHugeGrid plans a 3-chunk selection of an array of 10^9
// chunks (and of 10^9 shards) and lists its write units: the cost grows
// with the chunks touched, not the grid (allocations per op are a few per
// unit).
func BenchmarkPlanHugeGrid(b *testing.B) {
	for _, sharded := range []bool{false, true} {
		b.Run(fmt.Sprintf("sharded=%v", sharded), func(b *testing.B) {
			a := hugeGridArray(b, sharded)
			b.ReportAllocs()
			for b.Loop() {
				plan, err := a.Plan(nd.Range(0, 4), nd.Range(4*5_000, 4*5_000+12))
				if err != nil {
					b.Fatal(err)
				}
				n := 0
				for range plan.WriteUnits() {
					n++
				}
				if n != 3 {
					b.Fatalf("%d units", n)
				}
			}
		})
	}
}

// f32At returns element i of little-endian float32 bytes b.
func f32At(b []byte, i int) float32 {
	return math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
}

// hugeGridArray is an empty float32 array of 10^9 chunks of 4², or of 10^9
// shards of 4² made of 2² inner chunks.
func hugeGridArray(b *testing.B, sharded bool) *zarr.Array {
	t := &testing.T{}
	specs := []codecs.Spec{spec(t, "bytes", map[string]string{"endian": "little"})}
	if sharded {
		specs = shardSpecs(t, []int{2, 2})
	}
	meta := &zarr.ArrayMetadata{Shape: []int{4 * 100_000, 4 * 10_000}, DataType: dtype.TypeFloat32, ChunkShape: []int{4, 4},
		ChunkKeyEncoding: zarr.DefaultKeyEncoding(), FillValue: make([]byte, 4), Codecs: specs}
	a, err := zarr.CreateArray(context.Background(), mem.New(), "a", meta)
	if err != nil {
		b.Fatal(err)
	}
	return a
}

// BenchmarkGatherHugeGrid reads 3 points, and an orthogonal selection of 3
// rows by 3 columns, of an array of 10^9 chunks (and of 10^9 shards), none
// stored: the cost grows with the chunks touched and the indices given,
// never with the grid (the target: under 1 ms).
func BenchmarkGatherHugeGrid(b *testing.B) {
	for _, sharded := range []bool{false, true} {
		b.Run(fmt.Sprintf("sharded=%v", sharded), func(b *testing.B) {
			a := hugeGridArray(b, sharded)
			coords := [][]int{{399_999, 7, 123_456}, {0, 39_999, 20_000}}
			b.Run("points", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					v, _, err := a.ReadPointsBytes(context.Background(), coords)
					if err != nil || len(v) != 12 {
						b.Fatal(len(v), err)
					}
				}
			})
			b.Run("orthogonal", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					v, _, err := a.ReadBytes(context.Background(), nd.IndexArray(coords[0]...), nd.IndexArray(coords[1]...))
					if err != nil || len(v) != 36 {
						b.Fatal(len(v), err)
					}
				}
			})
		})
	}
}

// TestPlanReadUnitsStopsAtError: a shard index that cannot be read ends
// the iteration with its error, even for a consumer that goes on after it
// (ReadUnits yields nothing more).
func TestPlanReadUnitsStopsAtError(t *testing.T) {
	ctx := context.Background()
	for _, tc := range layouts(t, []int{4, 8})[1:] {
		t.Run(tc.name, func(t *testing.T) {
			st, _ := makeArray(t, []int{40, 48}, []int{16, 16}, tc.specs)
			a, err := zarr.OpenArray(ctx, st, "a")
			if err != nil {
				t.Fatal(err)
			}
			plan, err := a.Plan(nd.Range(0, 40), nd.Range(0, 48))
			if err != nil {
				t.Fatal(err)
			}
			broken := errors.New("index unreadable")
			hs := &hookStore{Store: st, before: func(context.Context, string) error { return broken }}
			var errs, after int
			for _, err := range plan.ReadUnits(ctx, hs) {
				if errs > 0 {
					after++
				}
				if err != nil {
					if !errors.Is(err, broken) {
						t.Errorf("error %v, want one wrapping %v", err, broken)
					}
					errs++
				}
			}
			if errs != 1 || after != 0 {
				t.Fatalf("%d errors and %d units after the first, want 1 and 0", errs, after)
			}
		})
	}
}

// getOnly hides every optional interface of a store but Get: a store read
// like a remote one (index first, ranges batched; no whole local reads).
type getOnly struct{ store.Reader }

func (g getOnly) Get(ctx context.Context, key string, r store.ByteRange) ([]byte, error) {
	return g.Reader.Get(ctx, key, r)
}

// TestReadRunsThePlan: the units a read's decode workers place are the
// read units its plan lists, through nested shards (each innermost chunk
// one unit, whether its shard was read whole or by ranges), from a local
// store and a remote-like one, cold and with the index cache warm;
// missing chunks and shards are fill units.
func TestReadRunsThePlan(t *testing.T) {
	ctx := context.Background()
	for _, tc := range layouts(t, []int{4, 8}) {
		st, _ := makeArray(t, []int{40, 48}, []int{16, 16}, tc.specs)
		a, err := zarr.OpenArray(ctx, st, "a")
		if err != nil {
			t.Fatal(err)
		}
		if err := zarr.Write(ctx, a, make([]float32, 16*16), nd.Range(16, 32), nd.Range(16, 32)); err != nil {
			t.Fatal(err)
		}
		for _, sel := range [][]nd.Item{
			{nd.Slice(0, 40, 1), nd.Slice(0, 48, 1)},
			{nd.Slice(3, 37, 2), nd.Slice(-1, 5, -3)},
			{nd.Slice(1, 30, 1), nd.IndexArray(2, 17, 18, 40)},
		} {
			for _, r := range []store.Reader{st, getOnly{st}} {
				for round := range 2 { // the second with the index cache warm
					name := fmt.Sprintf("%s/%v/%T/%d", tc.name, sel, r, round)
					plan, err := a.Plan(sel...)
					if err != nil {
						t.Fatal(err)
					}
					planned := map[string]bool{}
					for u, err := range plan.ReadUnits(ctx, r) {
						if err != nil {
							t.Fatal(err)
						}
						planned[fmt.Sprintf("%s %v", u.Key, u.Inner)] = u.Missing || u.Inner == nil
					}
					out := make([]byte, 4*nd.NumElements(plan.Selection().FullShape()))
					placed, err := pipeline.ReadPlanUnits(ctx, r, plan, out, pipeline.Options{})
					if err != nil {
						t.Fatal(err)
					}
					seen := map[string]bool{}
					for _, p := range placed {
						kind, unit, _ := strings.Cut(p, " ")
						if seen[unit] {
							t.Errorf("%s: unit %s placed twice", name, unit)
						}
						seen[unit] = true
						if _, ok := planned[unit]; ok {
							continue
						}
						key, _, _ := strings.Cut(unit, " ")
						if kind == "fill" && strings.HasSuffix(unit, " []") && hasKey(planned, key) {
							continue // a missing shard (or chunk), filled at once
						}
						t.Errorf("%s: placed %s, which the plan does not list", name, p)
					}
					for u, mayFill := range planned {
						key, _, _ := strings.Cut(u, " ")
						if !seen[u] && !(mayFill && seen[key+" []"]) {
							t.Errorf("%s: planned unit %s not placed", name, u)
						}
					}
				}
			}
		}
	}
}

// hasKey reports whether a unit of units ("key path") has key key.
func hasKey(units map[string]bool, key string) bool {
	for u := range units {
		if strings.HasPrefix(u, key+" ") {
			return true
		}
	}
	return false
}

package pipeline_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/pipeline"
	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/zarr"
)

// The gathers of points of a shard read whole go to the decode workers as
// pieces of the shard that the workers walk themselves (one unit per
// piece, not per inner chunk). These tests pin what the pieces must keep:
// values in every layout, the first error with its inner chunk's name,
// the budget given back, and a cancellation that stops a walk at the next
// inner chunk.

// decodeHook, when set, runs at every Decode of the countingCodec.
var decodeHook atomic.Pointer[func()]

// countingCodec is an identity bytes-to-bytes codec that runs decodeHook
// at every Decode.
type countingCodec struct{}

func (countingCodec) Name() string       { return "gozarr_test_counting" }
func (countingCodec) Configuration() any { return nil }
func (countingCodec) Encode(dst, src []byte) ([]byte, error) {
	return append(dst, src...), nil
}
func (countingCodec) MaxEncodedSize(n int) int { return n }
func (countingCodec) Decode(dst, src []byte, limit int) ([]byte, error) {
	if h := decodeHook.Load(); h != nil {
		(*h)()
	}
	if len(src) > limit {
		return dst, fmt.Errorf("%w: %d bytes, limit %d", codecs.ErrCorrupt, len(src), limit)
	}
	return append(dst, src...), nil
}

func init() {
	codecs.Register(countingCodec{}.Name(), func(json.RawMessage) (codecs.Codec, error) { return countingCodec{}, nil })
}

// walkPoints returns n points of a 2-D array of shape, at random, one in
// five a repeat of an earlier one.
func walkPoints(shape []int, n int, seed uint64) [][]int {
	r := rand.New(rand.NewPCG(seed, seed+1))
	coords := [][]int{make([]int, n), make([]int, n)}
	for k := range n {
		coords[0][k], coords[1][k] = r.IntN(shape[0]), r.IntN(shape[1])
		if k%5 == 4 {
			j := r.IntN(k)
			coords[0][k], coords[1][k] = coords[0][j], coords[1][j]
		}
	}
	return coords
}

// TestWalkedPointsEveryLayout: points gathered from chunks, shards and
// nested shards (whose inner shards are walked from memory), with stored
// and missing inner chunks, local and remote-like, at every decode
// concurrency, are the array's values.
func TestWalkedPointsEveryLayout(t *testing.T) {
	ctx := context.Background()
	shape := []int{40, 48}
	for _, tc := range layouts(t, []int{2, 4}) {
		st, vals := makeArray(t, shape, []int{16, 16}, tc.specs)
		a, err := zarr.OpenArray(ctx, st, "a")
		if err != nil {
			t.Fatal(err)
		}
		// A chunk all fill: deleted (or its inner chunks not stored).
		if err := zarr.Write(ctx, a, make([]float32, 16*16), nd.Range(16, 32), nd.Range(16, 32)); err != nil {
			t.Fatal(err)
		}
		for i := range vals {
			if r, c := i/shape[1], i%shape[1]; r >= 16 && r < 32 && c >= 16 && c < 32 {
				vals[i] = 0
			}
		}
		coords := walkPoints(shape, 5000, 7)
		for _, r := range []store.Reader{st, getOnly{st}} {
			for _, workers := range []int{1, 2, 3} {
				a, err := zarr.OpenArray(ctx, r, "a", zarr.WithConcurrency(4, workers))
				if err != nil {
					t.Fatal(err)
				}
				got, err := zarr.ReadPoints[float32](ctx, a, coords)
				if err != nil {
					t.Fatalf("%s, %T, %d workers: %v", tc.name, r, workers, err)
				}
				for k, g := range got {
					if want := vals[coords[0][k]*shape[1]+coords[1][k]]; g != want {
						t.Fatalf("%s, %T, %d workers: point %d (%d, %d) = %v, want %v", tc.name, r, workers, k, coords[0][k], coords[1][k], g, want)
					}
				}
			}
		}
	}
}

// TestWalkedPointsDamagedInnerChunk: a damaged inner chunk in the middle
// of a piece (the 101st of 256) fails a gather of points with its name,
// and every byte held goes back to the budget, whatever the decode
// concurrency.
func TestWalkedPointsDamagedInnerChunk(t *testing.T) {
	ctx := context.Background()
	shape := []int{256, 256}
	st, _ := makeArray(t, shape, shape, shardSpecs(t, []int{16, 16}))
	damageInnerChunk(t, st, 100) // inner chunk (6, 4)
	coords := walkPoints(shape, 20000, 9)
	for _, workers := range []int{1, 2, 4} {
		budget := pipeline.NewBudget(64 << 20)
		a, err := zarr.OpenArray(ctx, st, "a", zarr.WithConcurrency(4, workers), zarr.WithBudget(budget))
		if err != nil {
			t.Fatal(err)
		}
		for range 3 {
			_, err := zarr.ReadPoints[float32](ctx, a, coords)
			if !errors.Is(err, codecs.ErrCorrupt) || !strings.Contains(err.Error(), "inner chunk [6 4]") {
				t.Fatalf("workers %d: read: %v, want ErrCorrupt naming inner chunk [6 4]", workers, err)
			}
		}
		if n := budget.InUse(); n != 0 {
			t.Errorf("workers %d: %d bytes held against the budget after the failed reads", workers, n)
		}
	}
}

// TestWalkedPointsStopAtCancel: a gather of points cancelled while a
// decode worker walks a piece of a shard (256 inner chunks, pieces of 64)
// stops at the next inner chunk (one worker: 10 decodes, not the piece's
// 64), returns the cancellation, holds nothing against its budget and
// leaves no goroutine behind, with one worker or two.
func TestWalkedPointsStopAtCancel(t *testing.T) {
	shape := []int{256, 256}
	cfg := map[string]any{
		"chunk_shape":  []int{16, 16},
		"codecs":       []codecs.Spec{spec(t, "bytes", map[string]string{"endian": "little"}), spec(t, countingCodec{}.Name(), nil)},
		"index_codecs": []codecs.Spec{spec(t, "bytes", map[string]string{"endian": "little"}), spec(t, "crc32c", nil)},
	}
	st, _ := makeArray(t, shape, shape, []codecs.Spec{spec(t, "sharding_indexed", cfg)})
	coords := walkPoints(shape, 20000, 11)
	const at = 10 // the decode that cancels
	for _, workers := range []int{1, 2} {
		base := runtime.NumGoroutine()
		budget := pipeline.NewBudget(64 << 20)
		a, err := zarr.OpenArray(context.Background(), st, "a", zarr.WithConcurrency(4, workers), zarr.WithBudget(budget))
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		var decodes atomic.Int64
		hook := func() {
			if decodes.Add(1) == at {
				cancel()
			}
		}
		decodeHook.Store(&hook)
		_, err = zarr.ReadPoints[float32](ctx, a, coords)
		decodeHook.Store(nil)
		cancel()
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("workers %d: err = %v, want context.Canceled", workers, err)
		}
		// One worker cancels inside its own decode and checks before the
		// next inner chunk: exactly at decodes. (With two, the other one
		// decodes on until the cancellation reaches it, however long that
		// takes: only the error, the budget and the goroutines are pinned.)
		if n := decodes.Load(); workers == 1 && n != at || n < at {
			t.Errorf("workers %d: %d inner chunks decoded, want %d", workers, n, at)
		}
		if n := budget.InUse(); n != 0 {
			t.Errorf("workers %d: %d bytes held against the budget after the cancelled read", workers, n)
		}
		settle(t, base)
	}
}

// damageInnerChunk spoils the zstd frame header of inner chunk lin of
// shard a/c/0/0 of array "a" in st.
func damageInnerChunk(t *testing.T, st store.Store, lin int) {
	t.Helper()
	ctx := context.Background()
	b, err := st.Get(ctx, "a/c/0/0", store.Full())
	if err != nil {
		t.Fatal(err)
	}
	a, err := zarr.OpenArray(ctx, st, "a")
	if err != nil {
		t.Fatal(err)
	}
	ix, err := a.Sharding().IndexOf(b)
	if err != nil {
		t.Fatal(err)
	}
	off, _, ok := ix.Entry(lin)
	if !ok {
		t.Fatalf("inner chunk %d is not stored", lin)
	}
	for i := range 8 {
		b[off+int64(i)] ^= 0xff
	}
	if err := st.Set(ctx, "a/c/0/0", b); err != nil {
		t.Fatal(err)
	}
}

package pipeline_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/pipeline"
	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/mem"
	"github.com/gozarr/gozarr/zarr"
)

// hookStore wraps a store and runs a hook before every Get.
type hookStore struct {
	*mem.Store
	before func(ctx context.Context, key string) error
	gets   atomic.Int64
}

func (h *hookStore) Get(ctx context.Context, key string, r store.ByteRange) ([]byte, error) {
	h.gets.Add(1)
	if h.before != nil {
		if err := h.before(ctx, key); err != nil {
			return nil, err
		}
	}
	return h.Store.Get(ctx, key, r)
}

// ReadInto runs the hook too: the pipeline reads chunks into pooled buffers
// through it.
func (h *hookStore) ReadInto(ctx context.Context, key string, off int64, dst []byte) (int, error) {
	h.gets.Add(1)
	if h.before != nil {
		if err := h.before(ctx, key); err != nil {
			return 0, err
		}
	}
	return h.Store.ReadInto(ctx, key, off, dst)
}

// makeArray writes a 2-D float32 array of 64×64 chunks with the given
// codecs and returns its store and values.
func makeArray(t *testing.T, shape, chunks []int, specs []codecs.Spec) (*mem.Store, []float32) {
	t.Helper()
	ctx := context.Background()
	st := mem.New()
	meta := &zarr.ArrayMetadata{Shape: shape, DataType: dtype.TypeFloat32, ChunkShape: chunks,
		ChunkKeyEncoding: zarr.DefaultKeyEncoding(), FillValue: make([]byte, 4), Codecs: specs}
	a, err := zarr.CreateArray(ctx, st, "a", meta)
	if err != nil {
		t.Fatal(err)
	}
	vals := make([]float32, nd.NumElements(shape))
	for i := range vals {
		vals[i] = float32(math.Sin(float64(i)/97)) + float32(i%13)
	}
	if err := zarr.Write(ctx, a, vals); err != nil {
		t.Fatal(err)
	}
	return st, vals
}

func spec(t *testing.T, name string, cfg any) codecs.Spec {
	s := codecs.Spec{Name: name}
	if cfg != nil {
		b, err := json.Marshal(cfg)
		if err != nil {
			t.Fatal(err)
		}
		s.Configuration = b
	}
	return s
}

func zstdSpecs(t *testing.T) []codecs.Spec {
	return []codecs.Spec{spec(t, "bytes", map[string]string{"endian": "little"}), spec(t, "zstd", map[string]any{"level": 1, "checksum": false})}
}

// settle waits for the goroutine count to come back to at most base.
func settle(t *testing.T, base int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > base {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			n := runtime.Stack(buf, true)
			t.Fatalf("%d goroutines left, %d before:\n%s", runtime.NumGoroutine(), base, buf[:n])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestCancelLeavesNoGoroutine cancels a read while fetches are blocked and
// checks that Read returns promptly with the cancellation and that every
// goroutine it started has ended.
func TestCancelLeavesNoGoroutine(t *testing.T) {
	st, _ := makeArray(t, []int{512, 512}, []int{64, 64}, zstdSpecs(t))
	started := make(chan struct{}, 1000)
	hs := &hookStore{Store: st, before: func(ctx context.Context, key string) error {
		if !strings.Contains(key, "/c/") {
			return nil // metadata reads go through
		}
		started <- struct{}{}
		<-ctx.Done() // a store that hangs until the caller gives up
		return ctx.Err()
	}}
	base := runtime.NumGoroutine()
	ctx, cancel := context.WithCancel(context.Background())
	a2, err := zarr.OpenArray(context.Background(), hs, "a")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, _, err := a2.ReadBytes(ctx)
		done <- err
	}()
	<-started
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("read did not return after cancel")
	}
	settle(t, base)
}

// TestErrorMidRead makes one chunk fail and one chunk corrupt: Read returns
// that error with the chunk's key, and leaves no goroutine behind.
func TestErrorMidRead(t *testing.T) {
	ctx := context.Background()
	st, _ := makeArray(t, []int{512, 512}, []int{64, 64}, zstdSpecs(t))
	boom := errors.New("disk on fire")
	hs := &hookStore{Store: st, before: func(ctx context.Context, key string) error {
		if key == "a/c/3/5" {
			return boom
		}
		return nil
	}}
	base := runtime.NumGoroutine()
	a, err := zarr.OpenArray(ctx, hs, "a")
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = a.ReadBytes(ctx)
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want %v", err, boom)
	}
	settle(t, base)

	hs.before = nil // the failing chunk reads again; now one is corrupt
	if err := st.Set(ctx, "a/c/2/2", []byte("not zstd at all")); err != nil {
		t.Fatal(err)
	}
	_, _, err = a.ReadBytes(ctx)
	if !errors.Is(err, codecs.ErrCorrupt) || !bytes.Contains([]byte(err.Error()), []byte("a/c/2/2")) {
		t.Fatalf("err = %v, want ErrCorrupt naming a/c/2/2", err)
	}
	settle(t, base)
}

// TestInFlightCap checks that the bytes-in-flight cap bounds how many chunks
// are held between fetch and decode.
func TestInFlightCap(t *testing.T) {
	ctx := context.Background()
	st, vals := makeArray(t, []int{512, 512}, []int{64, 64}, zstdSpecs(t))
	var cur, peak atomic.Int64
	var mu sync.Mutex
	hs := &hookStore{Store: st, before: func(ctx context.Context, key string) error {
		if !strings.Contains(key, "/c/") {
			return nil
		}
		n := cur.Add(1)
		mu.Lock()
		peak.Store(max(peak.Load(), n))
		mu.Unlock()
		time.Sleep(time.Millisecond)
		cur.Add(-1)
		return nil
	}}
	chunk := int64(64 * 64 * 4)
	// Each chunk reserves its decoded size plus its largest encoding.
	a, err := zarr.OpenArray(ctx, hs, "a", zarr.WithPipeline(pipeline.Options{
		IOConcurrency: 16, DecodeConcurrency: 2, MaxBytesInFlight: 2 * (chunk + chunk + 1024)}))
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := zarr.Read[float32](ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	for i := range vals {
		if got[i] != vals[i] {
			t.Fatalf("value %d: %v, want %v", i, got[i], vals[i])
		}
	}
	if p := peak.Load(); p > 2 {
		t.Errorf("%d fetches in flight, cap allows 2", p)
	}
}

// TestSequentialEqualsParallel reads strided selections with one worker and
// with many and compares them element by element with the written values.
func TestSequentialEqualsParallel(t *testing.T) {
	ctx := context.Background()
	shape := []int{300, 200}
	st, vals := makeArray(t, shape, []int{64, 48}, zstdSpecs(t))
	for _, opt := range []pipeline.Options{{IOConcurrency: 1, DecodeConcurrency: 1}, {IOConcurrency: 32, DecodeConcurrency: 4}} {
		a, err := zarr.OpenArray(ctx, st, "a", zarr.WithPipeline(opt))
		if err != nil {
			t.Fatal(err)
		}
		for _, text := range []string{"::7, 3::5", "-1::-3, ::-1", "100, :", "..., 199"} {
			items, err := nd.ParseSelection(text)
			if err != nil {
				t.Fatal(err)
			}
			sel, err := a.Selection(items...)
			if err != nil {
				t.Fatal(err)
			}
			got, _, err := zarr.Read[float32](ctx, a, items...)
			if err != nil {
				t.Fatal(err)
			}
			k := 0
			for i := 0; i < sel[0].Count; i++ {
				for j := 0; j < sel[1].Count; j++ {
					r, c := sel[0].Start+i*sel[0].Step, sel[1].Start+j*sel[1].Step
					if want := vals[r*shape[1]+c]; got[k] != want {
						t.Fatalf("%+v %s: [%d,%d] = %v, want %v", opt, text, r, c, got[k], want)
					}
					k++
				}
			}
		}
	}
}

// TestMissingChunksOnlyFilled checks that fill values are written only where
// chunks are missing: a caller's buffer is overwritten exactly once per
// element, with the stored value or the fill.
func TestMissingChunksOnlyFilled(t *testing.T) {
	ctx := context.Background()
	st, vals := makeArray(t, []int{128, 128}, []int{64, 64}, zstdSpecs(t))
	if err := st.Delete(ctx, "a/c/1/0"); err != nil {
		t.Fatal(err)
	}
	a, err := zarr.OpenArray(ctx, st, "a")
	if err != nil {
		t.Fatal(err)
	}
	out := make([]float32, 128*128)
	for i := range out {
		out[i] = -1
	}
	if err := zarr.ReadInto(ctx, a, out); err != nil {
		t.Fatal(err)
	}
	for i := range out {
		want := vals[i]
		if i/128 >= 64 && i%128 < 64 {
			want = 0
		}
		if out[i] != want {
			t.Fatalf("element %d = %v, want %v", i, out[i], want)
		}
	}
}

// TestWrongOutputSize is an error, not a panic.
func TestWrongOutputSize(t *testing.T) {
	ctx := context.Background()
	st, _ := makeArray(t, []int{10, 10}, []int{4, 4}, zstdSpecs(t))
	a, err := zarr.OpenArray(ctx, st, "a")
	if err != nil {
		t.Fatal(err)
	}
	if err := a.ReadBytesInto(ctx, make([]byte, 13)); err == nil {
		t.Fatal("no error for a short output buffer")
	}
	if err := a.WriteBytes(ctx, make([]byte, 13)); err == nil {
		t.Fatal("no error for a short data buffer")
	}
	var buf [4]byte
	binary.LittleEndian.PutUint32(buf[:], 7)
	if err := a.WriteBytes(ctx, buf[:], nd.Index(3), nd.Index(3)); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 4)
	if err := a.ReadBytesInto(ctx, got, nd.Index(3), nd.Index(3)); err != nil || !bytes.Equal(got, buf[:]) {
		t.Fatalf("got %v, %v", got, err)
	}
}

// TestOversizedChunk stores a chunk longer than any valid encoding: reads
// of it, whole or in part, are ErrCorrupt, never a short or padded read.
// The large chunks take the path that asks the store for the size first.
func TestOversizedChunk(t *testing.T) {
	ctx := context.Background()
	for _, side := range []int{64, 1600} {
		st, _ := makeArray(t, []int{2 * side, 2 * side}, []int{side, side}, []codecs.Spec{spec(t, "bytes", map[string]string{"endian": "little"})})
		if err := st.Set(ctx, "a/c/0/1", make([]byte, side*side*4+100)); err != nil {
			t.Fatal(err)
		}
		a, err := zarr.OpenArray(ctx, st, "a")
		if err != nil {
			t.Fatal(err)
		}
		for _, items := range [][]nd.Item{nil, {nd.Range(0, 10), nd.Range(side-4, side+4)}} {
			if _, _, err := a.ReadBytes(ctx, items...); !errors.Is(err, codecs.ErrCorrupt) {
				t.Errorf("chunks of %d²: read %v: %v, want ErrCorrupt", side, items, err)
			}
		}
	}
}

package sharding_test

import (
	. "github.com/gozarr/gozarr/sharding"

	"context"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gozarr/gozarr/cache"
	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/internal/refdata"
	"github.com/gozarr/gozarr/internal/vecread"
	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/fs"
)

// vecStore is a filesystem store that counts its vectored reads.
type vecStore struct {
	*fs.Store
	vecs atomic.Int64
}

func (v *vecStore) ReadVec(ctx context.Context, key string, off int64, bufs [][]byte) (int, error) {
	v.vecs.Add(1)
	vr, ok := any(v.Store).(store.VectorReader) // not on every platform
	if !ok {
		return 0, errors.ErrUnsupported
	}
	return vr.ReadVec(ctx, key, off, bufs)
}

// newVecStore returns a counting vectored store over dir, skipping the
// test where the filesystem store has no vectored reads.
func newVecStore(t *testing.T, dir string) *vecStore {
	t.Helper()
	st, err := fs.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := any(st).(store.VectorReader); !ok {
		t.Skipf("store/fs has no vectored reads on %s", runtime.GOOS)
	}
	return &vecStore{Store: st}
}

// setMinVecRun sets vecread.MinRun for one test.
func setMinVecRun(t *testing.T, n int) {
	old := vecread.MinRun
	vecread.MinRun = n
	t.Cleanup(func() { vecread.MinRun = old })
}

// TestVectoredRefdata reads every sharded reference case whose inner
// chunks are uncompressed from the corpus files through a store with
// vectored reads, with every whole inner chunk read straight into the
// output, and compares with the .npy: each shard, several selections, with
// and without an index cache, sequential and concurrent.
func TestVectoredRefdata(t *testing.T) {
	setMinVecRun(t, 1)
	n := 0
	for _, name := range shardCases(t) {
		a, chain := loadRefChain(t, name)
		sc, ok := chain.ArrayToBytes().(*Codec)
		if !ok || len(chain.Codecs()) != 1 {
			continue
		}
		layout, err := sc.Layout(a.repr())
		if err != nil {
			t.Fatal(err)
		}
		if !layout.Identity() || layout.Nested() != nil {
			continue
		}
		n++
		t.Run(name, func(t *testing.T) {
			vs := newVecStore(t, a.dir)
			cache := NewIndexCache(0)
			item := a.dt.Size()
			forEachCoord(a.grid(), func(coords []int) {
				origin, extent := a.shardRegion(coords)
				key := a.key(coords)
				sels := selections(extent, layout.ChunkShape())
				for _, selName := range slices.Sorted(mapsKeys(sels)) {
					sel := sels[selName]
					want := a.expected(origin, sel)
					for _, opt := range []ReadOptions{{}, {Cache: cache}, {Cache: cache, Concurrency: 3}} {
						got := make([]byte, len(want))
						for i := range got {
							got[i] = 0xA5 // every byte must be written
						}
						dst := nd.Contiguous(got, sel.FullShape(), item)
						if err := readLayout(layout, context.Background(), StoreSource(vs, "vec:"+name, key), sel, dst, opt); err != nil {
							t.Fatalf("shard %s %s: %v", key, selName, err)
						}
						if i := sameElems(a.dt, got, want); i >= 0 {
							t.Fatalf("shard %s, selection %s %v, options %+v: differs at element %d", key, selName, sel, opt, i)
						}
					}
				}
			})
			if rc := refdata.Lookup(t, name); rc.ChunkObjectsPresent > 0 && vs.vecs.Load() == 0 {
				t.Error("no vectored reads")
			}
		})
	}
	if n < 3 {
		t.Fatalf("only %d sharded reference cases with uncompressed inner chunks", n)
	}
}

// vecLayout is a float32 shard of 16×64 with inner chunks of 8×32 stored
// uncompressed (128-byte runs in a wider output), its index at loc
// encoded with the bytes codec alone.
func vecLayout(t *testing.T, loc IndexLocation) *Layout {
	t.Helper()
	bytesLE := codecs.Spec{Name: "bytes", Configuration: []byte(`{"endian": "little"}`)}
	c, err := New([]int{8, 32}, []codecs.Spec{bytesLE}, []codecs.Spec{bytesLE}, loc)
	if err != nil {
		t.Fatal(err)
	}
	l, err := c.Layout(codecs.ChunkRepr{Shape: []int{16, 64}, DType: dtype.TypeFloat32, Fill: make([]byte, 4)})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// vecShard returns the values of a 16×64 float32 shard and its encoding.
func vecShard(t *testing.T, l *Layout) ([]byte, []byte) {
	t.Helper()
	vals := make([]byte, 16*64*4)
	for i := range 16 * 64 {
		binary.LittleEndian.PutUint32(vals[4*i:], math.Float32bits(float32(i)+0.25))
	}
	enc, _, err := l.EncodeShard(nil, vals)
	if err != nil {
		t.Fatal(err)
	}
	return vals, enc
}

// TestVectoredShardIntoWiderOutput reads a shard into part of a wider
// output (as the pipeline does for one shard of many), through the
// vectored path and from memory, with whole, partial, stepped and reversed
// selections.
func TestVectoredShardIntoWiderOutput(t *testing.T) {
	setMinVecRun(t, 1) // the layout's runs are 128 bytes
	l := vecLayout(t, IndexEnd)
	vals, enc := vecShard(t, l)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "s"), enc, 0o644); err != nil {
		t.Fatal(err)
	}
	vs := newVecStore(t, dir)
	shard := nd.Contiguous(vals, []int{16, 64}, 4)
	for _, tc := range []struct {
		name    string
		sel     nd.Selection
		minVecs int64
	}{
		{"whole", nd.Selection{{Start: 0, Count: 16, Step: 1}, {Start: 0, Count: 64, Step: 1}}, 4},
		{"one column of chunks", nd.Selection{{Start: 0, Count: 16, Step: 1}, {Start: 32, Count: 32, Step: 1}}, 2},
		{"cut columns", nd.Selection{{Start: 0, Count: 16, Step: 1}, {Start: 1, Count: 62, Step: 1}}, 0},
		{"cut rows", nd.Selection{{Start: 3, Count: 13, Step: 1}, {Start: 0, Count: 64, Step: 1}}, 2},
		{"stepped", nd.Selection{{Start: 0, Count: 8, Step: 2}, {Start: 0, Count: 64, Step: 1}}, 0},
		{"reversed", nd.Selection{{Start: 15, Count: 16, Step: -1}, {Start: 0, Count: 64, Step: 1}}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The shard's part sits at column 5 of a 100-wide output.
			full := tc.sel.FullShape()
			out := make([]byte, full[0]*100*4)
			ov := nd.Contiguous(out, []int{full[0], 100}, 4).Slice([]int{0, 5}, full, []int{1, 1})
			memOut := slices.Clone(out)
			mv := ov
			mv.Data = memOut
			before := vs.vecs.Load()
			if err := readLayout(l, context.Background(), StoreSource(vs, "", "s"), tc.sel, ov, ReadOptions{Concurrency: 2}); err != nil {
				t.Fatal(err)
			}
			if err := readLayout(l, context.Background(), BytesSource(enc), tc.sel, mv, ReadOptions{}); err != nil {
				t.Fatal(err)
			}
			want := make([]byte, len(out))
			wv := ov
			wv.Data = want
			nd.Copy(wv, shard.Slice([]int{tc.sel[0].Start, tc.sel[1].Start}, full, []int{tc.sel[0].Step, tc.sel[1].Step}))
			if !slices.Equal(out, want) || !slices.Equal(memOut, want) {
				t.Fatalf("vectored read equal: %v, memory read equal: %v", slices.Equal(out, want), slices.Equal(memOut, want))
			}
			if got := vs.vecs.Load() - before; got < tc.minVecs {
				t.Errorf("%d vectored reads, want at least %d", got, tc.minVecs)
			}
		})
	}
}

// TestVectoredCorruptShard reads shards whose uncompressed inner chunks
// do not fit: an index entry one byte too long or short, and a shard
// file cut short so that the last inner chunk lies past its end. Both are
// ErrCorruptIndex (codecs.ErrCorrupt), never a short or padded read.
func TestVectoredCorruptShard(t *testing.T) {
	setMinVecRun(t, 1) // the layout's runs are 128 bytes
	l := vecLayout(t, IndexStart)
	_, enc := vecShard(t, l)
	// The index is at the start: 4 entries of (offset, nbytes), uint64 LE.
	lastOff := int64(0)
	for i := range 4 {
		lastOff = max(lastOff, int64(binary.LittleEndian.Uint64(enc[16*i:])))
	}
	withEntry := func(i int, n uint64) []byte {
		b := slices.Clone(enc)
		binary.LittleEndian.PutUint64(b[16*i+8:], n)
		return b
	}
	full := nd.Selection{{Start: 0, Count: 16, Step: 1}, {Start: 0, Count: 64, Step: 1}}
	for _, tc := range []struct {
		name string
		data []byte
		msg  string
	}{
		{"entry one byte long", withEntry(1, 8*32*4+1), "has 1025 bytes"},
		{"entry one byte short", withEntry(2, 8*32*4-1), "has 1023 bytes"},
		// A local store tells the shard's size: the index is checked
		// against it before any chunk is read.
		{"file cut short", enc[:len(enc)-1], "outside the chunk region"},
		{"file cut inside the last chunk", enc[:lastOff+100], "outside the chunk region"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "s"), tc.data, 0o644); err != nil {
				t.Fatal(err)
			}
			vs := newVecStore(t, dir)
			out := make([]byte, 16*200*4)
			ov := nd.Contiguous(out, []int{16, 200}, 4).Slice([]int{0, 0}, []int{16, 64}, []int{1, 1})
			err := readLayout(l, context.Background(), StoreSource(vs, "", "s"), full, ov, ReadOptions{})
			if !errors.Is(err, ErrCorruptIndex) || !errors.Is(err, codecs.ErrCorrupt) || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("err = %v, want ErrCorruptIndex saying %q", err, tc.msg)
			}
		})
	}
}

// TestVectoredThreshold checks which inner chunks the default threshold
// reads straight into a wider output: those whose place is runs of 2 KiB,
// not those of 128-byte runs, nor any with a chunk cache.
func TestVectoredThreshold(t *testing.T) {
	bytesLE := codecs.Spec{Name: "bytes", Configuration: []byte(`{"endian": "little"}`)}
	for _, tc := range []struct {
		name     string
		inner    []int
		chunkMem bool
		wantVecs int64
	}{
		{"128-byte runs", []int{8, 32}, false, 0},
		{"2 KiB runs", []int{8, 512}, false, 4},
		{"2 KiB runs, chunk cache", []int{8, 512}, true, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := New(tc.inner, []codecs.Spec{bytesLE}, []codecs.Spec{bytesLE}, IndexEnd)
			if err != nil {
				t.Fatal(err)
			}
			shape := []int{2 * tc.inner[0], 2 * tc.inner[1]}
			l, err := c.Layout(codecs.ChunkRepr{Shape: shape, DType: dtype.TypeFloat32, Fill: make([]byte, 4)})
			if err != nil {
				t.Fatal(err)
			}
			vals := make([]byte, shape[0]*shape[1]*4)
			for i := range vals {
				vals[i] = byte(i*7 + 1)
			}
			enc, _, err := l.EncodeShard(nil, vals)
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "s"), enc, 0o644); err != nil {
				t.Fatal(err)
			}
			vs := newVecStore(t, dir)
			out := make([]byte, shape[0]*(shape[1]+16)*4)
			ov := nd.Contiguous(out, []int{shape[0], shape[1] + 16}, 4).Slice([]int{0, 16}, shape, []int{1, 1})
			opt := ReadOptions{}
			if tc.chunkMem {
				opt.ChunkCache = cache.NewLRU(1 << 20)
			}
			sel := nd.Selection{{Start: 0, Count: shape[0], Step: 1}, {Start: 0, Count: shape[1], Step: 1}}
			if err := readLayout(l, context.Background(), StoreSource(vs, "t", "s"), sel, ov, opt); err != nil {
				t.Fatal(err)
			}
			want := make([]byte, len(out))
			wv := ov
			wv.Data = want
			nd.Copy(wv, nd.Contiguous(vals, shape, 4))
			if !slices.Equal(out, want) {
				t.Fatal("read differs from the shard's values")
			}
			if got := vs.vecs.Load(); got != tc.wantVecs {
				t.Errorf("%d vectored reads, want %d", got, tc.wantVecs)
			}
		})
	}
}

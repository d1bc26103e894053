package zarr_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"iter"
	"math"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/gozarr/gozarr/cache"
	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/mem"
	"github.com/gozarr/gozarr/zarr"
)

// countStore counts the reads that reach a mem store. It hides mem's
// ReadInto and Size, so every chunk read is a Get or GetRanges.
type countStore struct {
	s    *mem.Store
	gets atomic.Int64
}

func (c *countStore) Get(ctx context.Context, key string, r store.ByteRange) ([]byte, error) {
	c.gets.Add(1)
	return c.s.Get(ctx, key, r)
}

func (c *countStore) GetRanges(ctx context.Context, key string, rs []store.ByteRange) ([][]byte, error) {
	c.gets.Add(1)
	return c.s.GetRanges(ctx, key, rs)
}

func (c *countStore) Set(ctx context.Context, key string, v []byte) error {
	return c.s.Set(ctx, key, v)
}
func (c *countStore) Delete(ctx context.Context, key string) error { return c.s.Delete(ctx, key) }
func (c *countStore) List(ctx context.Context, prefix string) iter.Seq2[string, error] {
	return c.s.List(ctx, prefix)
}
func (c *countStore) ListDir(ctx context.Context, dir string) ([]string, []string, error) {
	return c.s.ListDir(ctx, dir)
}

// Codec lists of the arrays the cache and iteration tests build.
const (
	plainZstd  = `[{"name":"bytes","configuration":{"endian":"little"}},{"name":"zstd","configuration":{"level":1,"checksum":false}}]`
	shardZstd  = `[{"name":"sharding_indexed","configuration":{"chunk_shape":%s,"codecs":[{"name":"bytes","configuration":{"endian":"little"}},{"name":"zstd","configuration":{"level":1,"checksum":false}}],"index_codecs":[{"name":"bytes","configuration":{"endian":"little"}},{"name":"crc32c"}],"index_location":"end"}}]`
	shardBytes = `[{"name":"sharding_indexed","configuration":{"chunk_shape":%s,"codecs":[{"name":"bytes","configuration":{"endian":"little"}}],"index_codecs":[{"name":"bytes","configuration":{"endian":"little"}},{"name":"crc32c"}],"index_location":"end"}}]`
)

// newFloatArray creates a float32 array of the given shape and chunk (or
// shard) shape at path in st, with codecs (a JSON list), writes values
// i*0.5 (i the C-order index) and returns the values.
func newFloatArray(t testing.TB, st store.Store, path string, shape, chunks []int, codecsJSON string) []byte {
	t.Helper()
	doc := fmt.Sprintf(`{"zarr_format":3,"node_type":"array","shape":%s,"data_type":"float32",
		"chunk_grid":{"name":"regular","configuration":{"chunk_shape":%s}},
		"chunk_key_encoding":{"name":"default","configuration":{"separator":"/"}},
		"fill_value":-1,"codecs":%s}`, ints(shape), ints(chunks), codecsJSON)
	meta, err := zarr.ParseArrayMetadata([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	a, err := zarr.CreateArray(context.Background(), st, path, meta)
	if err != nil {
		t.Fatal(err)
	}
	data := floats(nd.NumElements(shape), 0)
	if err := a.WriteBytes(context.Background(), data); err != nil {
		t.Fatal(err)
	}
	return data
}

// floats returns n float32 values salt + i*0.5.
func floats(n int, salt float32) []byte {
	b := make([]byte, 4*n)
	for i := range n {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(salt+float32(i)*0.5))
	}
	return b
}

func ints(s []int) string {
	b, _ := jsonInts(s)
	return b
}

func jsonInts(s []int) (string, error) {
	out := "["
	for i, v := range s {
		if i > 0 {
			out += ","
		}
		out += fmt.Sprint(v)
	}
	return out + "]", nil
}

// cacheKinds builds a fresh cache of each kind.
func cacheKinds(t *testing.T) map[string]cache.Cache {
	d, err := cache.NewDisk(64<<20, cache.DiskOptions{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	d2, err := cache.NewDisk(64<<20, cache.DiskOptions{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	tiered, err := cache.NewTiered(cache.NewLRU(8<<10), cache.NewCompressed(16<<10, cache.CompressedOptions{}), d2)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tiered.Close() })
	return map[string]cache.Cache{
		"lru":        cache.NewLRU(64 << 20),
		"compressed": cache.NewCompressed(64<<20, cache.CompressedOptions{Codec: cache.Zstd}),
		"disk":       d,
		"tiered":     tiered,
	}
}

var layouts = []struct {
	name   string
	shape  []int
	chunks []int
	codecs string
}{
	{"plain", []int{50, 30}, []int{8, 16}, plainZstd},
	{"sharded", []int{50, 30}, []int{16, 16}, fmt.Sprintf(shardZstd, "[4,8]")},
	{"sharded-uncompressed", []int{50, 30}, []int{16, 16}, fmt.Sprintf(shardBytes, "[4,8]")},
}

// TestCachedReadsNoGets: with a cache attached, a second full read costs no
// store reads at all and returns the same values; strided reads agree.
func TestCachedReadsNoGets(t *testing.T) {
	ctx := context.Background()
	for _, lay := range layouts {
		for name, c := range cacheKinds(t) {
			t.Run(lay.name+"/"+name, func(t *testing.T) {
				cs := &countStore{s: mem.New()}
				want := newFloatArray(t, cs, "a", lay.shape, lay.chunks, lay.codecs)
				a, err := zarr.OpenArray(ctx, cs, "a", zarr.WithCache(c))
				if err != nil {
					t.Fatal(err)
				}
				got, _, err := a.ReadBytes(ctx)
				if err != nil || !bytes.Equal(got, want) {
					t.Fatalf("first read: %v (equal %v)", err, bytes.Equal(got, want))
				}
				cs.gets.Store(0)
				got, _, err = a.ReadBytes(ctx)
				if err != nil || !bytes.Equal(got, want) {
					t.Fatalf("second read: %v (equal %v)", err, bytes.Equal(got, want))
				}
				if n := cs.gets.Load(); n != 0 {
					t.Errorf("second read made %d store reads, want 0", n)
				}
				if st := c.Stats(); st.Hits == 0 || st.Entries == 0 {
					t.Errorf("stats %v", st)
				}
				// A strided, reversed selection from the cache.
				part, shape, err := a.ReadBytes(ctx, nd.Slice(47, 2, -3), nd.Slice(1, 29, 5))
				if err != nil {
					t.Fatal(err)
				}
				k := 0
				for i := 47; i > 2; i -= 3 {
					for j := 1; j < 29; j += 5 {
						off := 4 * (i*lay.shape[1] + j)
						if !bytes.Equal(part[4*k:4*k+4], want[off:off+4]) {
							t.Fatalf("element (%d,%d) differs", i, j)
						}
						k++
					}
				}
				if k != nd.NumElements(shape) {
					t.Fatalf("shape %v, %d elements checked", shape, k)
				}
			})
		}
	}
}

// TestCacheWritesInvalidate: a write through the array replaces what the
// cache holds.
func TestCacheWritesInvalidate(t *testing.T) {
	ctx := context.Background()
	for _, lay := range layouts {
		t.Run(lay.name, func(t *testing.T) {
			c := cache.NewLRU(64 << 20)
			cs := &countStore{s: mem.New()}
			want := newFloatArray(t, cs, "a", lay.shape, lay.chunks, lay.codecs)
			a, err := zarr.OpenArray(ctx, cs, "a", zarr.WithCache(c))
			if err != nil {
				t.Fatal(err)
			}
			if _, _, err := a.ReadBytes(ctx); err != nil {
				t.Fatal(err)
			}
			// Rows 10..19 become new values; rows 40.. the fill value
			// through deleted chunks is not possible here, so write.
			rows := floats(10*lay.shape[1], 1000)
			if err := a.WriteBytes(ctx, rows, nd.Range(10, 20)); err != nil {
				t.Fatal(err)
			}
			copy(want[10*lay.shape[1]*4:], rows)
			got, _, err := a.ReadBytes(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Error("read after write returned stale values")
			}
			// Fill everything with the fill value: chunks are deleted.
			fill := make([]byte, len(want))
			for i := 0; i < len(fill); i += 4 {
				binary.LittleEndian.PutUint32(fill[i:], math.Float32bits(-1))
			}
			if err := a.WriteBytes(ctx, fill); err != nil {
				t.Fatal(err)
			}
			got, _, _ = a.ReadBytes(ctx)
			if !bytes.Equal(got, fill) {
				t.Error("read after deleting chunks returned stale values")
			}
		})
	}
}

// TestSharedCache: arrays of a group share one cache and one budget.
func TestSharedCache(t *testing.T) {
	ctx := context.Background()
	st := mem.New()
	if _, err := zarr.CreateGroup(ctx, st, "g", nil); err != nil {
		t.Fatal(err)
	}
	wantA := newFloatArray(t, st, "g/a", []int{20, 20}, []int{5, 5}, plainZstd)
	newFloatArray(t, st, "g/b", []int{20, 20}, []int{5, 5}, plainZstd)
	b := &countStore{s: st}
	grp, err := zarr.OpenGroup(ctx, b, "g")
	if err != nil {
		t.Fatal(err)
	}
	c := cache.NewLRU(1 << 20)
	aa, _ := grp.OpenArray(ctx, "a", zarr.WithCache(c))
	ab, _ := grp.OpenArray(ctx, "b", zarr.WithCache(c))
	// b gets different values: write through it.
	wantB := floats(400, 7)
	if err := ab.WriteBytes(ctx, wantB); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		ga, _, _ := aa.ReadBytes(ctx)
		gb, _, _ := ab.ReadBytes(ctx)
		if !bytes.Equal(ga, wantA) || !bytes.Equal(gb, wantB) {
			t.Fatal("shared cache mixed arrays up")
		}
	}
	if st := c.Stats(); st.Entries != 32 || st.Hits != 32 {
		t.Errorf("stats %v, want 32 entries and hits", st)
	}
}

// TestCacheSingleFlight: concurrent cold reads of one array fetch each
// chunk once.
func TestCacheSingleFlight(t *testing.T) {
	ctx := context.Background()
	cs := &countStore{s: mem.New()}
	want := newFloatArray(t, cs, "a", []int{64, 64}, []int{8, 8}, plainZstd)
	c := cache.NewLRU(64 << 20)
	var wg sync.WaitGroup
	cs.gets.Store(0)
	for range 6 {
		wg.Go(func() {
			a, err := zarr.OpenArray(ctx, cs, "a", zarr.WithCache(c))
			if err != nil {
				t.Error(err)
				return
			}
			got, _, err := a.ReadBytes(ctx)
			if err != nil || !bytes.Equal(got, want) {
				t.Errorf("read: %v", err)
			}
		})
	}
	wg.Wait()
	// 64 chunk gets, plus one metadata get per open.
	if n := cs.gets.Load(); n != 64+6 {
		t.Errorf("%d store reads, want %d", n, 64+6)
	}
}

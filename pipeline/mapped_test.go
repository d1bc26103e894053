//go:build unix

package pipeline

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/fs"
)

// mapCounter passes a filesystem store's reads on, with or without its
// Mapper, and counts the values mapped.
type mapCounter struct {
	*fs.Store
	maps   atomic.Int64
	noMaps bool
}

func (m *mapCounter) Capabilities() store.Capabilities {
	c := store.CapabilitiesOf(m.Store)
	if m.noMaps {
		c.Mapper = nil
	} else {
		c.Mapper = m
	}
	return c
}

func (m *mapCounter) Map(ctx context.Context, key string) ([]byte, func(), error) {
	m.maps.Add(1)
	return m.Store.Map(ctx, key)
}

const zstdShards = `[{"name": "sharding_indexed", "configuration": {"chunk_shape": [8, 8, 8],
	"codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "zstd", "configuration": {"level": 1, "checksum": false}}],
	"index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}]}}]`

// TestMappedShards reads points and boxes of a zstd-sharded array in a
// filesystem store through its Mapper and through plain reads: the same
// values, the written ones, with every shard the gather reads whole
// mapped (12: the 8 written and the 4 missing, which map as not found and
// read as fill) and none with the mapper withheld; a chain with a codec
// of another package (Blosc) is not mapped.
func TestMappedShards(t *testing.T) {
	ctx := context.Background()
	st, _ := tempStore(t)
	g := specGrid(t, zstdShards, []int{32, 32, 48}, []int{16, 16, 16}, dtype.TypeFloat32)
	g.Key = func(c []int) string { return fmt.Sprintf("c/%d/%d/%d", c[0], c[1], c[2]) }
	data := make([]byte, 32*32*48*4)
	for i := range data {
		data[i] = byte(i*7 + i/4096)
	}
	// All but the last shard along the last dimension are written.
	if err := Write(ctx, st, g, sel(t, []int{32, 32, 48}, nd.Range(0, 32), nd.Range(0, 32), nd.Range(0, 32)), rowsOf(data, 32*32, 48*4, 32*4), Options{}); err != nil {
		t.Fatal(err)
	}
	want := func(p []int) []byte {
		if p[2] >= 32 {
			return make([]byte, 4)
		}
		i := ((p[0]*32+p[1])*48 + p[2]) * 4
		return data[i : i+4]
	}
	r := rand.New(rand.NewPCG(1, 2))
	pts := nd.Points{Rank: 3}
	for range 20000 {
		pts.Coords = append(pts.Coords, r.IntN(32), r.IntN(32), r.IntN(48))
	}
	for _, noMaps := range []bool{false, true} {
		m := &mapCounter{Store: st, noMaps: noMaps}
		out := make([]byte, pts.Len()*4)
		if err := ReadPoints(ctx, m, g, pts, out, Options{}); err != nil {
			t.Fatal(err)
		}
		for k := range pts.Len() {
			if got := out[4*k : 4*k+4]; !slices.Equal(got, want(pts.At(k))) {
				t.Fatalf("mapper withheld %v: point %v = %v, want %v", noMaps, pts.At(k), got, want(pts.At(k)))
			}
		}
		if got, wantMaps := m.maps.Load(), int64(12); noMaps && got != 0 || !noMaps && got != wantMaps {
			t.Fatalf("mapper withheld %v: %d shards mapped, want %d", noMaps, got, wantMaps)
		}
		box := make([]byte, 32*32*48*4)
		if err := Read(ctx, m, g, sel(t, []int{32, 32, 48}, nd.All(), nd.All(), nd.All()), box, Options{}); err != nil {
			t.Fatal(err)
		}
		for _, p := range [][]int{{0, 0, 0}, {31, 31, 31}, {5, 17, 40}, {20, 3, 9}} {
			i := ((p[0]*32+p[1])*48 + p[2]) * 4
			if got := box[i : i+4]; !slices.Equal(got, want(p)) {
				t.Fatalf("mapper withheld %v: box element %v = %v, want %v", noMaps, p, got, want(p))
			}
		}
	}
	// A chain with a codec of another package is read, not mapped.
	if ownCodecs(g.Shard.Inner()) != true {
		t.Fatal("bytes + zstd is not the codecs package's own")
	}
	if ok := ownCodecs(mustChain(t, `[{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 1, "shuffle": "noshuffle", "typesize": 4, "blocksize": 0}}]`)); ok {
		t.Fatal("a Blosc chain counts as the codecs package's own")
	}
}

// tempStore returns a filesystem store in a new directory, and the directory.
func tempStore(t *testing.T) (*fs.Store, string) {
	t.Helper()
	dir := t.TempDir()
	st, err := fs.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	return st, dir
}

// rowsOf returns the first keep bytes of every row of rowBytes bytes of
// data (rows rows).
func rowsOf(data []byte, rows, rowBytes, keep int) []byte {
	out := make([]byte, 0, rows*keep)
	for i := range rows {
		out = append(out, data[i*rowBytes:i*rowBytes+keep]...)
	}
	return out
}

// sel is nd.Normalize(items, shape), which must succeed.
func sel(t *testing.T, shape []int, items ...nd.Item) nd.Selection {
	t.Helper()
	s, err := nd.Normalize(items, shape)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func mustChain(t *testing.T, specs string) *codecs.Chain {
	t.Helper()
	g := specGrid(t, `[{"name": "sharding_indexed", "configuration": {"chunk_shape": [4], "codecs": `+specs+`,
		"index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]}}]`, []int{8}, []int{8}, dtype.TypeFloat32)
	return g.Shard.Inner()
}

// TestMappedFault truncates a mapped file under the reader: copying its
// lost pages and decoding a chunk from them are errors wrapping
// codecs.ErrCorrupt, not a crash (SIGBUS), and a panic that is not a
// memory fault in the mapped bytes given (a fault at another address)
// still panics.
func TestMappedFault(t *testing.T) {
	ctx := context.Background()
	st, dir := tempStore(t)
	g := specGrid(t, zstdShards, []int{16, 16, 16}, []int{16, 16, 16}, dtype.TypeFloat32)
	chain := g.Shard.Inner()
	raw := make([]byte, 8*8*8*4)
	for i := range raw {
		raw[i] = byte(i % 251)
	}
	enc, err := chain.Encode(nil, raw)
	if err != nil {
		t.Fatal(err)
	}
	value := append(make([]byte, 3*os.Getpagesize()), enc...) // the chunk on pages past the first
	if err := st.Set(ctx, "v", value); err != nil {
		t.Fatal(err)
	}
	b, unmap, err := st.Map(ctx, "v")
	if err != nil {
		t.Fatal(err)
	}
	defer unmap()
	if !slices.Equal(b, value) {
		t.Fatal("the mapped bytes are not the value")
	}
	if err := os.Truncate(filepath.Join(dir, "v"), 1); err != nil {
		t.Fatal(err)
	}
	if err := copyMapped(make([]byte, 16), b[2*os.Getpagesize():]); !errors.Is(err, codecs.ErrCorrupt) {
		t.Fatalf("copy of truncated pages: %v, want ErrCorrupt", err)
	}
	w := worker{}
	defer w.close()
	out := make([]byte, len(raw))
	shape := []int{8, 8, 8}
	part := sel(t, shape, nd.All(), nd.All(), nd.All())
	var p nd.ChunkPart
	for q := range part.Chunks(shape) {
		p = q
	}
	u := unit{chain: chain, shape: shape, part: p, dst: nd.Contiguous(out, shape, 4), data: b[3*os.Getpagesize():]}
	if err := w.decodeMapped(&u); !errors.Is(err, codecs.ErrCorrupt) {
		t.Fatalf("decode of truncated pages: %v, want ErrCorrupt", err)
	}
	for name, f := range map[string]func(){
		"a panic that is not a fault": func() { panic("not a fault") },
		"a fault outside the bytes given": func() {
			if b[2*os.Getpagesize()] == 1 { // a fault at a page the truncation took
				t.Log("read a lost page")
			}
		},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s was recovered", name)
				}
			}()
			func() (err error) {
				defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
				defer recoverFault(&err, b[:16]) // the first page, which the truncation kept
				f()
				return nil
			}()
		}()
	}
}

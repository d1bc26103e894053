package sharding_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"testing"

	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/dtype"
	. "github.com/gozarr/gozarr/sharding"
)

// allocated returns the bytes fn allocates.
func allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestManyInnerChunksAtOpen (issue 11, finding 3): a 551-byte zarr.json of
// a shard of 2^26 inner chunks of shape [1] cost 7.6 GB and 52 s to open,
// since the layout encoded an empty index to find its size and computed
// the Morton order. The index size now comes from the index chain's
// declared fixed size and the write order is computed on the first write:
// opening a layout of MaxInnerChunks inner chunks allocates next to
// nothing, and more inner chunks than that are refused.
func TestManyInnerChunksAtOpen(t *testing.T) {
	repr := func(n int) codecs.ChunkRepr {
		return codecs.ChunkRepr{Shape: []int{n}, DType: dtype.TypeUint8, Fill: []byte{0}}
	}
	c, err := New([]int{1}, rawInner, []codecs.Spec{bytesLE, {Name: "crc32c"}}, IndexEnd)
	if err != nil {
		t.Fatal(err)
	}
	var l *Layout
	n := allocated(func() { l, err = c.Layout(repr(MaxInnerChunks)) })
	if err != nil {
		t.Fatal(err)
	}
	if n > 1<<20 {
		t.Errorf("opening a layout of %d inner chunks allocated %d bytes", MaxInnerChunks, n)
	}
	if want := 16*MaxInnerChunks + 4; l.IndexSize() != want {
		t.Errorf("index size %d, want %d", l.IndexSize(), want)
	}
	_, err = c.Layout(repr(1 << 26))
	if !errors.Is(err, codecs.ErrInvalidConfig) {
		t.Fatalf("2^26 inner chunks: %v, want ErrInvalidConfig", err)
	}
	// An index chain without a fixed size is refused without encoding.
	z, err := New([]int{1}, rawInner, []codecs.Spec{bytesLE, {Name: "zstd"}}, IndexEnd)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := z.Layout(repr(8)); !errors.Is(err, codecs.ErrInvalidConfig) {
		t.Fatalf("zstd index: %v, want ErrInvalidConfig", err)
	}
}

// FuzzLayoutConfig builds a sharding_indexed codec from an arbitrary
// configuration and resolves it for an arbitrary 1- to 3-d shard of
// uint16: it must never panic, errors must wrap codecs' sentinels, and
// resolving allocates a bounded amount (no index or order the size of the
// inner chunk count), whatever the numbers.
func FuzzLayoutConfig(f *testing.F) {
	f.Add([]byte(`{"chunk_shape":[2,2],"codecs":[{"name":"bytes","configuration":{"endian":"little"}}],"index_codecs":[{"name":"bytes","configuration":{"endian":"little"}},{"name":"crc32c"}]}`), 4, 4, 0)
	f.Add([]byte(`{"chunk_shape":[1],"codecs":[{"name":"bytes"}],"index_codecs":[{"name":"bytes"}],"index_location":"start"}`), 1<<26, 0, 0)
	f.Add([]byte(`{"chunk_shape":[2,2],"codecs":[{"name":"sharding_indexed","configuration":{"chunk_shape":[1,1],"codecs":[{"name":"bytes"}],"index_codecs":[{"name":"bytes"}]}}],"index_codecs":[{"name":"bytes"}]}`), 8, 8, 0)
	f.Add([]byte(`{"chunk_shape":[3,1,2],"codecs":[{"name":"bytes"},{"name":"zstd"}],"index_codecs":[{"name":"bytes"},{"name":"gzip"}]}`), 6, 5, 4)
	f.Fuzz(func(t *testing.T, cfg []byte, a, b, c int) {
		shape := []int{}
		for _, s := range []int{a, b, c} {
			if s <= 0 {
				break
			}
			shape = append(shape, s)
		}
		spec := codecs.Spec{Name: Name, Configuration: json.RawMessage(cfg)}
		var err error
		n := allocated(func() {
			var codec codecs.Codec
			if codec, err = codecs.New(spec); err != nil {
				return
			}
			sc, ok := codec.(*Codec)
			if !ok {
				err = fmt.Errorf("codecs.New(%q) made a %T", Name, codec)
				return
			}
			_, err = sc.Layout(codecs.ChunkRepr{Shape: shape, DType: dtype.TypeUint16, Fill: []byte{0, 0}})
		})
		if err != nil && !errors.Is(err, codecs.ErrInvalidConfig) && !errors.Is(err, codecs.ErrUnknownCodec) {
			t.Fatalf("error %v wraps no codecs sentinel", err)
		}
		if n > 64<<20 {
			t.Fatalf("resolving %s for shape %v allocated %d bytes", cfg, shape, n)
		}
	})
}

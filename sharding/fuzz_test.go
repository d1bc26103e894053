package sharding_test

import (
	. "github.com/gozarr/gozarr/sharding"

	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/nd"
)

// fuzzLayouts are the layouts the fuzz targets decode with: 2x2 inner
// chunks of a 4x4 uint8 shard, uncompressed or zstd, index at either end,
// with or without crc32c.
func fuzzLayouts(t testing.TB) []*Layout {
	c, err := New([]int{2, 2}, rawInner, []codecs.Spec{bytesLE}, IndexEnd)
	if err != nil {
		t.Fatal(err)
	}
	noCRC, err := c.Layout(codecs.ChunkRepr{Shape: []int{4, 4}, DType: dtype.TypeUint8, Fill: []byte{0}})
	if err != nil {
		t.Fatal(err)
	}
	return []*Layout{
		badLayout(t, rawInner, IndexEnd),
		badLayout(t, rawInner, IndexStart),
		badLayout(t, zstdInner, IndexEnd),
		noCRC, // no checksum: the fuzzer reaches the entry checks
	}
}

// FuzzDecodeIndex feeds arbitrary bytes to DecodeIndex: it must not panic,
// and an index it accepts must only hold entries inside the shard.
func FuzzDecodeIndex(f *testing.F) {
	ls := fuzzLayouts(f)
	f.Add(craft(f, ls[0], nil, E, E, E, E, E, E, E, E)[:ls[0].IndexSize()], int64(-1))
	f.Add(craft(f, ls[0], []byte{1, 2, 3, 4}, 0, 4, E, E, E, E, E, E)[4:], int64(200))
	f.Add(craft(f, ls[1], []byte{1, 2, 3, 4}, 68, 4, E, E, E, E, E, E)[:68], int64(72))
	f.Add(make([]byte, 68), int64(68))
	f.Fuzz(func(t *testing.T, b []byte, size int64) {
		for _, l := range ls {
			ix, err := l.DecodeIndex(b, size)
			if err != nil {
				if !errors.Is(err, codecs.ErrCorrupt) && !errors.Is(err, codecs.ErrChecksum) {
					t.Fatalf("error %v is neither ErrCorrupt nor ErrChecksum", err)
				}
				continue
			}
			for i := range ix.NumChunks() {
				off, n, ok := ix.Entry(i)
				if !ok {
					continue
				}
				if off < 0 || n < 0 || off+n < off || (size >= 0 && off+n > size) {
					t.Fatalf("accepted entry %d: (%d, %d) in a %d-byte shard", i, off, n, size)
				}
			}
		}
	})
}

// FuzzDecodeShard feeds arbitrary shards to Decode and to Read (from memory
// and from a store): no panic, only documented errors, and when a shard
// decodes, every partial read agrees with the whole decode.
func FuzzDecodeShard(f *testing.F) {
	ls := fuzzLayouts(f)
	f.Add(craft(f, ls[0], []byte{1, 2, 3, 4}, 0, 4, E, E, E, E, E, E), uint8(0))
	f.Add(craft(f, ls[1], []byte{1, 2, 3, 4, 5, 6}, 68, 4, 70, 4, E, E, E, E), uint8(1))
	data := make([]byte, 16)
	for i := range data {
		data[i] = byte(i)
	}
	for _, l := range ls {
		enc, _, err := l.EncodeShard(nil, data)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(enc, uint8(7))
	}
	f.Add([]byte{}, uint8(3))
	sels := []nd.Selection{
		{{Start: 0, Count: 4, Step: 1}, {Start: 0, Count: 4, Step: 1}},
		{{Start: 1, Count: 2, Step: 1}, {Start: 3, Count: 2, Step: -2}},
		{{Start: 2, Count: 1, Step: 1}, {Start: 1, Count: 1, Step: 1}},
		{{Start: 0, Count: 2, Step: 2}, {Start: 0, Count: 2, Step: 1}},
	}
	f.Fuzz(func(t *testing.T, b []byte, which uint8) {
		l := ls[int(which)%len(ls)]
		whole := make([]byte, 16)
		derr := l.Codec().Decode(whole, b, l.Shard())
		if derr != nil && !errors.Is(derr, codecs.ErrCorrupt) && !errors.Is(derr, codecs.ErrChecksum) {
			t.Fatalf("Decode: undocumented error %v", derr)
		}
		s := memWith(t, "s", b)
		for _, sel := range sels {
			for _, src := range []Source{BytesSource(b), StoreSource(s, "", "s")} {
				out := make([]byte, sel.NumElements())
				err := readLayout(l, context.Background(), src, sel, nd.Contiguous(out, sel.FullShape(), 1), ReadOptions{})
				if err != nil {
					if !errors.Is(err, codecs.ErrCorrupt) && !errors.Is(err, codecs.ErrChecksum) {
						t.Fatalf("Read: undocumented error %v", err)
					}
					continue
				}
				if derr == nil && !bytes.Equal(out, extract(nd.Contiguous(whole, []int{4, 4}, 1), sel)) {
					t.Fatalf("Read %v of %v disagrees with Decode", sel, src)
				}
			}
		}
	})
}

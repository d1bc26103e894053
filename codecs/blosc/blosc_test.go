package blosc

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/codecs/blosc/blosctest"
	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/internal/refdata"
)

// genData returns n bytes of compressible data derived from seed.
func genData(n, ts int, seed uint64) []byte { return blosctest.Data(blosctest.Walk, n, ts, seed) }

func refUnshuffle(dst, src []byte, ts int) {
	n := len(src) / ts
	for i := range n {
		for j := range ts {
			dst[i*ts+j] = src[j*n+i]
		}
	}
	copy(dst[n*ts:], src[n*ts:])
}

// refBitshuffle is the bit shuffle straight from its definition.
func refBitshuffle(src []byte, ts int) []byte {
	dst := make([]byte, len(src))
	n := len(src) / ts
	if n%8 != 0 {
		copy(dst, src)
		return dst
	}
	rl := n / 8
	for i := range n {
		for j := range ts {
			for b := range 8 {
				if src[i*ts+j]>>b&1 != 0 {
					dst[(8*j+b)*rl+i/8] |= 1 << (i % 8)
				}
			}
		}
	}
	copy(dst[n*ts:], src[n*ts:])
	return dst
}

func TestShuffleMatchesReference(t *testing.T) {
	for _, ts := range []int{1, 2, 3, 4, 5, 6, 8, 12, 16, 24, 255} {
		for _, n := range []int{0, 1, 7, 8, 63, 64, 65, 1000, 4099, 4096, 8195, 24 * 136, 16*8*24 + 5} {
			src := genData(n, 1, uint64(ts*n))
			for i := range src {
				src[i] ^= byte(i * 7)
			}
			want := make([]byte, n)
			nel := n / ts
			for i := range nel {
				for j := range ts {
					want[j*nel+i] = src[i*ts+j]
				}
			}
			copy(want[nel*ts:], src[nel*ts:])
			got := make([]byte, n)
			shuffle(got, src, ts)
			if !bytes.Equal(got, want) {
				t.Fatalf("shuffle ts=%d n=%d differs", ts, n)
			}
			back := make([]byte, n)
			unshuffle(back, got, ts)
			ref := make([]byte, n)
			refUnshuffle(ref, got, ts)
			if !bytes.Equal(back, src) || !bytes.Equal(ref, src) {
				t.Fatalf("unshuffle ts=%d n=%d differs", ts, n)
			}
			bs := refBitshuffle(src, ts)
			got2 := make([]byte, n)
			bitshuffle(got2, src, ts, make([]byte, n))
			if !bytes.Equal(got2, bs) {
				t.Fatalf("bitshuffle ts=%d n=%d differs", ts, n)
			}
			back2 := make([]byte, n)
			bitunshuffle(back2, bs, ts, make([]byte, n))
			if !bytes.Equal(back2, src) {
				t.Fatalf("bitunshuffle ts=%d n=%d differs", ts, n)
			}
		}
	}
}

func TestTransposeBits(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 1000 {
		x := r.Uint64()
		var want uint64
		for i := range 8 {
			for k := range 8 {
				if x>>(8*i+k)&1 != 0 {
					want |= 1 << (8*k + i)
				}
			}
		}
		if got := transposeBits(x); got != want {
			t.Fatalf("transposeBits(%#x) = %#x, want %#x", x, got, want)
		}
	}
}

// TestRoundTrip compresses and decompresses across cname x shuffle x
// typesize x clevel x size, checking header fields and the size bound.
func TestRoundTrip(t *testing.T) {
	small := []int{0, 1, 7, 127, 128, 1001, 40000}
	mid, big := 300001, 3<<20+5
	if testing.Short() || raceEnabled {
		mid, big = 70001, 1<<20+3 // big: only without -race
	}
	buf := make([]byte, 0, big+HeaderSize)
	for _, cname := range cnames {
		for _, sh := range []Shuffle{NoShuffle, ByteShuffle, BitShuffle} {
			for _, ts := range []int{1, 2, 3, 4, 8, 16} {
				for _, clevel := range []int{0, 1, 5, 9} {
					ss := append(small[:len(small):len(small)], mid)
					if clevel == 9 {
						ss[len(ss)-1] = 70001 // the slowest levels: keep it quick
					}
					if clevel == 5 && (ts == 4 || ts == 3) && !raceEnabled {
						ss = append(ss, big)
					}
					for _, n := range ss {
						opts := Options{Cname: cname, Clevel: clevel, Shuffle: sh, Typesize: ts}
						name := fmt.Sprintf("%s/%s/ts%d/c%d/n%d", cname, sh, ts, clevel, n)
						src := genData(n, ts, uint64(n+ts))
						frame, err := Compress(buf[:0], src, opts)
						if err != nil {
							t.Fatalf("%s: %v", name, err)
						}
						checkRoundTrip(t, name, frame, src, opts)
					}
				}
			}
		}
	}
}

func checkRoundTrip(t *testing.T, name string, frame, src []byte, opts Options) {
	t.Helper()
	n := len(src)
	if len(frame) > n+HeaderSize {
		t.Fatalf("%s: frame of %d bytes exceeds %d", name, len(frame), n+HeaderSize)
	}
	h, err := ReadInfo(frame)
	if err != nil {
		t.Fatalf("%s: ReadInfo: %v", name, err)
	}
	if h.NBytes != n || h.CBytes != len(frame) || h.TypeSize != opts.Typesize {
		t.Fatalf("%s: header %+v", name, h)
	}
	if want := computeBlocksize(mustCode(opts.Cname), opts.Clevel, opts.Typesize, n, opts.Blocksize); h.BlockSize != want {
		t.Fatalf("%s: blocksize %d, want %d", name, h.BlockSize, want)
	}
	if (opts.Clevel == 0 || n < minBufferSize) && h.Flags&FlagMemcpyed == 0 {
		t.Fatalf("%s: flags %#x, want a stored frame", name, h.Flags)
	}
	if n >= 1<<16 && opts.Clevel >= 5 && opts.Cname != Snappy && opts.Shuffle != NoShuffle && opts.Typesize > 1 && h.Flags&FlagMemcpyed != 0 {
		t.Fatalf("%s: compressible data was stored", name)
	}
	out := make([]byte, 2, 2+n)
	got, err := Decompress(out, frame, n)
	if err != nil {
		t.Fatalf("%s: Decompress: %v", name, err)
	}
	if !bytes.Equal(got[2:], src) {
		t.Fatalf("%s: round trip differs", name)
	}
	if n > 0 && &got[0] != &out[0] {
		t.Fatalf("%s: result not in the caller's buffer", name)
	}
}

func mustCode(name string) int {
	c, _ := compCode(name)
	return c
}

// TestBlocksizeAndSplit checks compute_blocksize and the split rule against
// values worked out from c-blosc 1.21's source.
func TestBlocksizeAndSplit(t *testing.T) {
	tests := []struct {
		code, clevel, ts, n, forced, want int
	}{
		{codeLZ4, 5, 4, 1 << 20, 0, 1 << 19},     // 32K*4=128K, split: *4=512K
		{codeLZ4, 5, 4, 100, 0, 100},             // small buffer: whole
		{codeZstd, 5, 4, 1 << 20, 0, 1 << 18},    // HCR 64K*4, no split
		{codeZstd, 9, 8, 4 << 20, 0, 1 << 20},    // 64K*8*2
		{codeLZ4HC, 9, 8, 4 << 20, 0, 1 << 20},   // 1M*8 capped at 1M
		{codeBloscLZ, 1, 1, 1 << 20, 0, 1 << 16}, // 16K, split: min 64K
		{codeBloscLZ, 0, 4, 1 << 20, 0, 8 << 10}, // clevel 0: /4, no enlarging
		{codeLZ4, 5, 3, 1000, 0, 999},            // multiple of typesize
		{codeLZ4, 5, 4, 2, 0, 1},                 // fewer bytes than one element
		{codeZstd, 3, 4, 16384, 2048, 2048},      // forced
		{codeZstd, 3, 4, 16384, 10, 128},         // forced, at least 128
		{codeLZ4, 5, 32, 1 << 20, 0, 1 << 17},    // typesize > 16: no split
	}
	for _, tt := range tests {
		if got := computeBlocksize(tt.code, tt.clevel, tt.ts, tt.n, tt.forced); got != tt.want {
			t.Errorf("computeBlocksize(%s, clevel %d, ts %d, n %d, forced %d) = %d, want %d",
				cnames[tt.code], tt.clevel, tt.ts, tt.n, tt.forced, got, tt.want)
		}
	}
	if splitBlock(codeZstd, 4, 1<<16) || !splitBlock(codeLZ4, 4, 1<<16) || splitBlock(codeLZ4, 4, 500) || splitBlock(codeLZ4, 17, 1<<16) {
		t.Error("split rule differs from c-blosc's forward-compatible mode")
	}
}

// TestEncoderMatchesCorpus re-encodes every v3 blosc chunk of the corpus
// and checks that the header (flags, block size) is the one zarr-python's
// c-blosc wrote.
func TestEncoderMatchesCorpus(t *testing.T) {
	for _, c := range refdata.Cases(t) {
		var specs []v3CodecSpec
		if c.ZarrFormat != 3 || json.Unmarshal(c.Codecs, &specs) != nil || len(specs) != 2 || specs[1].Name != "blosc" {
			continue
		}
		codec, err := NewCodec(specs[1].Configuration)
		if err != nil {
			t.Fatal(err)
		}
		for _, idx := range refdata.GridIndices(c.Shape, c.ChunkShape) {
			src, err := os.ReadFile(c.File(c.ChunkKey(idx)))
			if err != nil {
				continue
			}
			h, _ := ReadInfo(src)
			data, err := Decompress(nil, src, -1)
			if err != nil {
				t.Fatal(err)
			}
			enc, err := codec.Encode(nil, data)
			if err != nil {
				t.Fatal(err)
			}
			g, _ := ReadInfo(enc)
			if g.Flags != h.Flags || g.BlockSize != h.BlockSize || g.TypeSize != h.TypeSize {
				t.Errorf("%s %v: header flags %#x bs %d ts %d, c-blosc wrote %#x %d %d", c.Name, idx, g.Flags, g.BlockSize, g.TypeSize, h.Flags, h.BlockSize, h.TypeSize)
			}
			if testing.Verbose() && len(idx) > 0 && idx[0] == 0 && idx[1] == 0 {
				t.Logf("%s: gozarr %d bytes, c-blosc %d bytes (identical: %v)", c.Name, g.CBytes, h.CBytes, bytes.Equal(enc, src))
			}
		}
	}
}

func TestCodecConfig(t *testing.T) {
	c, err := codecs.New(codecs.Spec{Name: "blosc", Configuration: []byte(`{"cname":"lz4","clevel":5,"shuffle":"shuffle","blocksize":0}`)})
	if err != nil {
		t.Fatal(err)
	}
	b := c.(*Codec).WithTypeSize(4).(*Codec)
	if o := b.Options(); o.Typesize != 4 || o.Cname != "lz4" || o.Clevel != 5 || o.Shuffle != ByteShuffle {
		t.Errorf("options %+v", o)
	}
	spec, err := codecs.SpecOf(b)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"cname":"lz4","clevel":5,"shuffle":"shuffle","typesize":4,"blocksize":0}`; string(spec.Configuration) != want {
		t.Errorf("configuration %s, want %s", spec.Configuration, want)
	}
	// absent shuffle: bitshuffle for 1-byte types, as zarr-python
	d, _ := NewCodec([]byte(`{"cname":"zstd","clevel":1,"blocksize":0}`))
	if s := d.WithTypeSize(1).(*Codec).Options().Shuffle; s != BitShuffle {
		t.Errorf("auto shuffle for typesize 1 = %v", s)
	}
	if s := d.WithTypeSize(8).(*Codec).Options().Shuffle; s != ByteShuffle {
		t.Errorf("auto shuffle for typesize 8 = %v", s)
	}
	for _, bad := range []string{
		`{"cname":"lzma","clevel":5,"shuffle":"shuffle","blocksize":0}`,
		`{"cname":"lz4","clevel":5,"shuffle":"autoshuffle","blocksize":0}`,
		`{"cname":"lz4","clevel":5,"shuffle":"shuffle","blocksize":-1}`,
		`{"cname":"lz4","clevel":5,"shuffle":"shuffle","blocksize":0,"extra":1}`,
	} {
		if _, err := NewCodec([]byte(bad)); !errors.Is(err, codecs.ErrInvalidConfig) {
			t.Errorf("NewCodec(%s) = %v, want ErrInvalidConfig", bad, err)
		}
	}
	if _, err := Compress(nil, []byte("x"), Options{Cname: "lzma"}); !errors.Is(err, ErrInvalidOptions) {
		t.Errorf("Compress with a bad cname: %v", err)
	}
}

// TestHostileFrames checks that damaged frames fail cleanly.
func TestHostileFrames(t *testing.T) {
	src := genData(100000, 4, 7)
	var frames [][]byte
	for _, cname := range cnames {
		f, err := Compress(nil, src, Options{Cname: cname, Clevel: 5, Shuffle: ByteShuffle, Typesize: 4})
		if err != nil {
			t.Fatal(err)
		}
		frames = append(frames, f)
	}
	put32 := func(f []byte, off int, v uint32) []byte {
		g := bytes.Clone(f)
		binary.LittleEndian.PutUint32(g[off:], v)
		return g
	}
	for i, f := range frames {
		cases := map[string][]byte{
			"truncated header": f[:10],
			"truncated":        f[:len(f)-1],
			"version 3":        append([]byte{3}, f[1:]...),
			"lz version 9":     append([]byte{2, 9}, f[2:]...),
			"future flag":      append([]byte{2, 1, f[2] | 0x08}, f[3:]...),
			"codec 7":          append([]byte{2, 1, f[2] | 0xe0}, f[3:]...),
			"typesize 0":       append([]byte{2, 1, f[2], 0}, f[4:]...),
			"nbytes huge":      put32(f, 4, 0x7fffffff),
			"nbytes negative":  put32(f, 4, 0x80000000),
			"blocksize 0":      put32(f, 8, 0),
			"blocksize huge":   put32(f, 8, 0x7fffffff),
			"cbytes huge":      put32(f, 12, uint32(len(f)+1)),
			"bstart negative":  put32(f, 16, 0xffffffff),
			"bstart past end":  put32(f, 16, uint32(len(f))),
			"bstart in header": put32(f, 16, 2),
			"csize huge":       put32(f, int(binary.LittleEndian.Uint32(f[16:])), 0x7ffffff0),
			"csize negative":   put32(f, int(binary.LittleEndian.Uint32(f[16:])), 0xfffffff0),
			"stored, short":    append([]byte{2, 1, f[2] | FlagMemcpyed}, f[3:]...),
		}
		for name, g := range cases {
			out, err := Decompress(nil, g, len(src))
			if err == nil && bytes.Equal(out, src) && name != "truncated" {
				t.Errorf("%s/%s: decoded", cnames[i], name)
			}
			if err != nil && !errors.Is(err, codecs.ErrCorrupt) {
				t.Errorf("%s/%s: %v does not wrap codecs.ErrCorrupt", cnames[i], name, err)
			}
		}
		// Flipping bytes anywhere must not panic.
		for off := 0; off < len(f); off += 1 + len(f)/200 {
			g := bytes.Clone(f)
			g[off] ^= 0x5a
			Decompress(nil, g, len(src))
		}
		if _, err := Decompress(nil, f, len(src)-1); !errors.Is(err, ErrTooLarge) {
			t.Errorf("%s: limit below size: %v", cnames[i], err)
		}
	}
}

func BenchmarkUnshuffle(b *testing.B) {
	for _, ts := range []int{2, 4, 8, 16, 3} {
		src := genData(256<<10, ts, 1)
		dst := make([]byte, len(src))
		b.Run(fmt.Sprintf("ts%d", ts), func(b *testing.B) {
			b.SetBytes(int64(len(src)))
			b.ReportAllocs()
			done := cpuMeter(b, len(src))
			for b.Loop() {
				unshuffle(dst, src, ts)
			}
			done()
		})
	}
}

func BenchmarkBitunshuffle(b *testing.B) {
	for _, ts := range []int{1, 2, 4, 8} {
		src := genData(256<<10, ts, 1)
		dst := make([]byte, len(src))
		tmp := make([]byte, len(src))
		b.Run(fmt.Sprintf("ts%d", ts), func(b *testing.B) {
			b.SetBytes(int64(len(src)))
			b.ReportAllocs()
			done := cpuMeter(b, len(src))
			for b.Loop() {
				bitunshuffle(dst, src, ts, tmp)
			}
			done()
		})
	}
}

func BenchmarkDecompress(b *testing.B) {
	for _, bc := range []struct {
		cname string
		sh    Shuffle
		ts    int
	}{{LZ4, ByteShuffle, 4}, {Zstd, ByteShuffle, 4}, {LZ4, BitShuffle, 4}, {BloscLZ, ByteShuffle, 4}, {Zlib, ByteShuffle, 4}, {LZ4, NoShuffle, 4}} {
		src := genData(4<<20, bc.ts, 1)
		frame, err := Compress(nil, src, Options{Cname: bc.cname, Clevel: 5, Shuffle: bc.sh, Typesize: bc.ts})
		if err != nil {
			b.Fatal(err)
		}
		dst := make([]byte, 0, len(src))
		b.Run(fmt.Sprintf("%s-%s-ts%d", bc.cname, bc.sh, bc.ts), func(b *testing.B) {
			b.SetBytes(int64(len(src)))
			b.ReportAllocs()
			done := cpuMeter(b, len(src))
			for b.Loop() {
				if _, err := Decompress(dst, frame, len(src)); err != nil {
					b.Fatal(err)
				}
			}
			done()
			b.ReportMetric(float64(len(src))/float64(len(frame)), "ratio")
		})
	}
}

func BenchmarkCompress(b *testing.B) {
	for _, cname := range cnames {
		src := genData(4<<20, 4, 1)
		dst := make([]byte, 0, len(src)+HeaderSize)
		b.Run(cname, func(b *testing.B) {
			b.SetBytes(int64(len(src)))
			b.ReportAllocs()
			var n int
			for b.Loop() {
				out, err := Compress(dst, src, Options{Cname: cname, Clevel: 5, Shuffle: ByteShuffle, Typesize: 4})
				if err != nil {
					b.Fatal(err)
				}
				n = len(out)
			}
			b.ReportMetric(float64(len(src))/float64(n), "ratio")
		})
	}
}

// TestChain resolves the codec in a codecs.Chain (bytes + blosc without a
// typesize) and checks the chain passes the element size and round-trips.
func TestChain(t *testing.T) {
	repr := codecs.ChunkRepr{Shape: []int{64, 50}, DType: dtype.TypeFloat32, Fill: make([]byte, 4)}
	ch, err := codecs.NewChain([]codecs.Spec{{Name: "bytes", Configuration: []byte(`{"endian":"little"}`)},
		{Name: "blosc", Configuration: []byte(`{"cname":"lz4","clevel":5,"shuffle":"shuffle","blocksize":0}`)}}, repr)
	if err != nil {
		t.Fatal(err)
	}
	src := genData(repr.NumBytes(), 4, 9)
	enc, err := ch.Encode(nil, src)
	if err != nil {
		t.Fatal(err)
	}
	if h, err := ReadInfo(enc); err != nil || h.TypeSize != 4 || h.Flags&FlagShuffle == 0 {
		t.Fatalf("chain frame header %+v, %v: want typesize 4, shuffled", h, err)
	}
	out := make([]byte, repr.NumBytes())
	if err := ch.Decode(out, enc); err != nil || !bytes.Equal(out, src) {
		t.Fatalf("chain round trip: %v", err)
	}
}

package codecs

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/internal/refdata"
)

// allTypes is every core data type plus a raw-bits type.
var allTypes = []dtype.DataType{
	dtype.TypeBool, dtype.TypeInt8, dtype.TypeInt16, dtype.TypeInt32, dtype.TypeInt64,
	dtype.TypeUint8, dtype.TypeUint16, dtype.TypeUint32, dtype.TypeUint64,
	dtype.TypeFloat16, dtype.TypeFloat32, dtype.TypeFloat64,
	dtype.TypeComplex64, dtype.TypeComplex128, mustRaw(24),
}

func mustRaw(bits int) dtype.DataType {
	d, err := dtype.RawBits(bits)
	if err != nil {
		panic(err)
	}
	return d
}

func reprOf(dt dtype.DataType, shape ...int) ChunkRepr {
	return ChunkRepr{Shape: shape, DType: dt, Fill: make([]byte, dt.Size())}
}

// specs parses a JSON codec list.
func specs(t testing.TB, js string) []Spec {
	t.Helper()
	var s []Spec
	if err := json.Unmarshal([]byte(js), &s); err != nil {
		t.Fatalf("bad test specs %s: %v", js, err)
	}
	return s
}

func randomBytes(r *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		// Runs and noise, so compressors have something to do.
		if i%7 < 3 {
			b[i] = byte(i / 64)
		} else {
			b[i] = byte(r.Uint32())
		}
	}
	return b
}

// reverseOrder returns the JSON of the permutation n-1..0.
func reverseOrder(n int) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = strconv.Itoa(n - 1 - i)
	}
	return "[" + strings.Join(parts, ",") + "]"
}

// TestRoundTrip runs every codec and configuration through one table over
// all data types and shapes (0-d and empty included), reusing the encode
// and decode buffers from one case to the next.
func TestRoundTrip(t *testing.T) {
	chains := []struct {
		name string
		js   func(ndim int) string
	}{
		{"bytes-little", func(int) string { return `[{"name":"bytes","configuration":{"endian":"little"}}]` }},
		{"bytes-big", func(int) string { return `[{"name":"bytes","configuration":{"endian":"big"}}]` }},
		{"gzip-0", func(int) string {
			return `[{"name":"bytes","configuration":{"endian":"little"}},{"name":"gzip","configuration":{"level":0}}]`
		}},
		{"gzip-1", func(int) string {
			return `[{"name":"bytes","configuration":{"endian":"big"}},{"name":"gzip","configuration":{"level":1}}]`
		}},
		{"gzip-9", func(int) string {
			return `[{"name":"bytes","configuration":{"endian":"little"}},{"name":"gzip","configuration":{"level":9}}]`
		}},
		{"zstd-m3", func(int) string {
			return `[{"name":"bytes","configuration":{"endian":"little"}},{"name":"zstd","configuration":{"level":-3,"checksum":true}}]`
		}},
		{"zstd-0", func(int) string {
			return `[{"name":"bytes","configuration":{"endian":"little"}},{"name":"zstd","configuration":{"level":0,"checksum":false}}]`
		}},
		{"zstd-7", func(int) string {
			return `[{"name":"bytes","configuration":{"endian":"big"}},{"name":"zstd","configuration":{"level":7,"checksum":true}}]`
		}},
		{"zstd-19", func(int) string {
			return `[{"name":"bytes","configuration":{"endian":"little"}},{"name":"zstd","configuration":{"level":19,"checksum":false}}]`
		}},
		{"crc32c", func(int) string { return `[{"name":"bytes","configuration":{"endian":"little"}},{"name":"crc32c"}]` }},
		{"zstd-crc32c", func(int) string {
			return `[{"name":"bytes","configuration":{"endian":"big"}},{"name":"zstd","configuration":{"level":3,"checksum":false}},{"name":"crc32c"}]`
		}},
		{"transpose-gzip", func(n int) string {
			return `[{"name":"transpose","configuration":{"order":` + reverseOrder(n) + `}},{"name":"bytes","configuration":{"endian":"little"}},{"name":"gzip","configuration":{"level":5}}]`
		}},
		{"transpose-transpose-big-crc", func(n int) string {
			o := reverseOrder(n)
			return `[{"name":"transpose","configuration":{"order":` + o + `}},{"name":"transpose","configuration":{"order":` + o + `}},{"name":"bytes","configuration":{"endian":"big"}},{"name":"crc32c"}]`
		}},
	}
	shapes := [][]int{{}, {0}, {1}, {7}, {3, 5}, {0, 4}, {2, 3, 4}, {2, 1, 3, 2}, {17, 33}}
	r := rand.New(rand.NewPCG(1, 2))
	var enc, dec []byte // reused across every case
	for _, ch := range chains {
		for _, dt := range allTypes {
			for _, shape := range shapes {
				repr := reprOf(dt, shape...)
				name := fmt.Sprintf("%s/%s/%v", ch.name, dt, shape)
				js := ch.js(len(shape))
				c, err := NewChain(specs(t, js), repr)
				if err != nil {
					t.Fatalf("%s: NewChain: %v", name, err)
				}
				src := randomBytes(r, repr.NumBytes())
				enc, err = c.Encode(enc[:0], src)
				if err != nil {
					t.Fatalf("%s: Encode: %v", name, err)
				}
				if len(enc) > c.MaxEncodedSize() {
					t.Errorf("%s: encoded %d bytes, MaxEncodedSize %d", name, len(enc), c.MaxEncodedSize())
				}
				if cap(dec) < len(src) {
					dec = make([]byte, len(src))
				}
				dec = dec[:len(src)]
				clear(dec)
				if err := c.Decode(dec, enc); err != nil {
					t.Fatalf("%s: Decode: %v", name, err)
				}
				if !bytes.Equal(dec, src) {
					t.Fatalf("%s: round trip differs", name)
				}
				// The metadata form round-trips too.
				sp, err := c.Specs()
				if err != nil {
					t.Fatalf("%s: Specs: %v", name, err)
				}
				got, _ := json.Marshal(sp)
				want, _ := json.Marshal(specs(t, js))
				if !bytes.Equal(got, want) {
					t.Errorf("%s: Specs = %s, want %s", name, got, want)
				}
			}
		}
	}
}

// TestRefdata decodes every stored chunk of reference arrays written by
// zarr-python through NewChain and compares it with the expected .npy.
func TestRefdata(t *testing.T) {
	cases := []string{
		"v3_gzip_l1", "v3_gzip_l9", "v3_zstd_l0", "v3_zstd_l1", "v3_zstd_l3_checksum",
		"v3_zstd_lm3_checksum", "v3_zstd_l19", "v3_crc32c_only", "v3_crc32c_after_zstd",
		"v3_transpose_2d", "v3_transpose_3d", "v3_transpose_big_gzip_crc32c",
		"v3_endian_big_int16", "v3_endian_big_uint32", "v3_endian_big_int64", "v3_endian_big_uint64",
		"v3_endian_big_float16", "v3_endian_big_float32", "v3_endian_big_float64",
		"v3_endian_big_complex64", "v3_endian_big_complex128", "v3_endian_big_float64_zstd",
		"v3_dtype_bool", "v3_dtype_int8", "v3_dtype_int16", "v3_dtype_int32", "v3_dtype_int64",
		"v3_dtype_uint8", "v3_dtype_uint16", "v3_dtype_uint32", "v3_dtype_uint64",
		"v3_dtype_float16", "v3_dtype_float32", "v3_dtype_float64", "v3_dtype_complex64", "v3_dtype_complex128",
		"v3_scalar_float64", "v3_scalar_complex128_gzip", "v3_scalar_bool_v2key",
		"v3_edge_chunk_larger_than_array", "v3_ndim4", "v3_cke_v2_dot", "v3_cke_default_dot",
		"v3_fill_int8_m1", "v3_group/mask",
	}
	for _, name := range cases {
		t.Run(strings.ReplaceAll(name, "/", "_"), func(t *testing.T) {
			rc := refdata.Lookup(t, name)
			var specs []Spec
			if err := json.Unmarshal(rc.Codecs, &specs); err != nil {
				t.Fatal(err)
			}
			dt, err := dtype.Parse(rc.DType)
			if err != nil {
				t.Fatal(err)
			}
			cs := rc.GridChunkShape()
			repr := reprOf(dt, cs...)
			c, err := NewChain(specs, repr)
			if err != nil {
				t.Fatal(err)
			}
			want := rc.ExpectedArray(t).Data
			es := dt.Size()
			out := make([]byte, repr.NumBytes())
			decoded := 0
			for _, idx := range refdata.GridIndices(rc.Shape, cs) {
				key := rc.ChunkKey(idx)
				enc, err := os.ReadFile(rc.File(key))
				if err == nil {
					if err := c.Decode(out, enc); err != nil {
						t.Fatalf("chunk %s: %v", key, err)
					}
					compareChunk(t, key, out, want, rc.Shape, cs, idx, es)
					fresh, err := c.DecodeNew(enc)
					if err != nil || !bytes.Equal(fresh, out) || cap(fresh) != len(out) {
						t.Fatalf("chunk %s: DecodeNew = %d bytes (cap %d), %v; want Decode's %d",
							key, len(fresh), cap(fresh), err, len(out))
					}
					decoded++
				} else if !os.IsNotExist(err) {
					t.Fatal(err)
				}
			}
			if decoded == 0 {
				t.Fatal("no chunk decoded")
			}
		})
	}
}

// compareChunk checks every in-bounds element of the decoded chunk at grid
// index idx against the full array.
func compareChunk(t *testing.T, key string, chunk, full []byte, shape, cs, idx []int, es int) {
	t.Helper()
	n := len(cs)
	pos := make([]int, n)
	for off := 0; off < len(chunk)/es || (n == 0 && off == 0); off++ {
		// Multi-index of off within the chunk.
		rem := off
		for k := n - 1; k >= 0; k-- {
			pos[k] = rem % cs[k]
			rem /= cs[k]
		}
		lin, in := 0, true
		for k := 0; k < n; k++ {
			g := idx[k]*cs[k] + pos[k]
			if g >= shape[k] {
				in = false
				break
			}
			lin = lin*shape[k] + g
		}
		if !in {
			continue
		}
		if got, want := chunk[off*es:off*es+es], full[lin*es:lin*es+es]; !bytes.Equal(got, want) {
			t.Fatalf("chunk %s element %v: got % x, want % x", key, pos, got, want)
		}
		if n == 0 {
			break
		}
	}
}

// TestDecodeNewLarge checks DecodeNew on a chunk past the size where it
// decodes in place (with the spare room trimmed) and on a corrupt one.
func TestDecodeNewLarge(t *testing.T) {
	repr := reprOf(dtype.TypeFloat32, 1024, 1024)
	c, err := NewChain(specs(t, `[{"name":"bytes","configuration":{"endian":"little"}},{"name":"zstd","configuration":{"level":1}}]`), repr)
	if err != nil {
		t.Fatal(err)
	}
	src := make([]byte, repr.NumBytes())
	for i := range src {
		src[i] = byte(i * i >> 9)
	}
	enc, err := c.Encode(nil, src)
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.DecodeNew(enc)
	if err != nil || !bytes.Equal(got, src) || cap(got) != len(src) {
		t.Fatalf("DecodeNew: %d bytes cap %d equal %v err %v", len(got), cap(got), bytes.Equal(got, src), err)
	}
	if _, err := c.DecodeNew(enc[:len(enc)/2]); !errors.Is(err, ErrCorrupt) {
		t.Errorf("truncated chunk: %v, want ErrCorrupt", err)
	}
}

// TestChainErrors checks that chains of the wrong shape or configuration are
// refused with the right sentinel.
func TestChainErrors(t *testing.T) {
	i16 := reprOf(dtype.TypeInt16, 4, 5)
	tests := []struct {
		name string
		js   string
		repr ChunkRepr
		want error
	}{
		{"no codecs", `[]`, i16, ErrInvalidConfig},
		{"only gzip", `[{"name":"gzip","configuration":{"level":1}}]`, i16, ErrInvalidConfig},
		{"gzip before bytes", `[{"name":"gzip","configuration":{"level":1}},{"name":"bytes","configuration":{"endian":"little"}}]`, i16, ErrInvalidConfig},
		{"transpose after bytes", `[{"name":"bytes","configuration":{"endian":"little"}},{"name":"transpose","configuration":{"order":[1,0]}}]`, i16, ErrInvalidConfig},
		{"two bytes", `[{"name":"bytes","configuration":{"endian":"little"}},{"name":"bytes","configuration":{"endian":"little"}}]`, i16, ErrInvalidConfig},
		{"unknown codec", `[{"name":"bytes","configuration":{"endian":"little"}},{"name":"nope"}]`, i16, ErrUnknownCodec},
		{"endian missing int16", `[{"name":"bytes"}]`, i16, ErrInvalidConfig},
		{"endian missing complex64", `["bytes"]`, reprOf(dtype.TypeComplex64, 3), ErrInvalidConfig},
		{"endian missing r16 (raw bits have nothing to swap, as zarr-python 3 writes them)", `["bytes"]`, reprOf(mustRaw(16), 3), nil},
		{"endian bad", `[{"name":"bytes","configuration":{"endian":"middle"}}]`, i16, ErrInvalidConfig},
		{"endian empty", `[{"name":"bytes","configuration":{"endian":""}}]`, i16, ErrInvalidConfig},
		{"bytes unknown field", `[{"name":"bytes","configuration":{"endian":"little","x":1}}]`, i16, ErrInvalidConfig},
		{"transpose wrong ndim", `[{"name":"transpose","configuration":{"order":[0]}},"bytes"]`, reprOf(dtype.TypeUint8, 2, 2), ErrInvalidConfig},
		{"transpose repeat", `[{"name":"transpose","configuration":{"order":[0,0]}},"bytes"]`, reprOf(dtype.TypeUint8, 2, 2), ErrInvalidConfig},
		{"transpose out of range", `[{"name":"transpose","configuration":{"order":[0,2]}},"bytes"]`, reprOf(dtype.TypeUint8, 2, 2), ErrInvalidConfig},
		{"transpose negative", `[{"name":"transpose","configuration":{"order":[-1,0]}},"bytes"]`, reprOf(dtype.TypeUint8, 2, 2), ErrInvalidConfig},
		{"transpose no order", `[{"name":"transpose"},"bytes"]`, reprOf(dtype.TypeUint8, 2, 2), ErrInvalidConfig},
		{"transpose C", `[{"name":"transpose","configuration":{"order":"C"}},"bytes"]`, reprOf(dtype.TypeUint8, 2, 2), ErrInvalidConfig},
		{"gzip level string", `["bytes",{"name":"gzip","configuration":{"level":"1"}}]`, reprOf(dtype.TypeUint8, 2), ErrInvalidConfig},
		{"zstd unknown field", `["bytes",{"name":"zstd","configuration":{"level":1,"dict":""}}]`, reprOf(dtype.TypeUint8, 2), ErrInvalidConfig},
		{"zstd checksum string", `["bytes",{"name":"zstd","configuration":{"level":1,"checksum":"yes"}}]`, reprOf(dtype.TypeUint8, 2), ErrInvalidConfig},
		{"crc32c config", `["bytes",{"name":"crc32c","configuration":{"x":1}}]`, reprOf(dtype.TypeUint8, 2), ErrInvalidConfig},
		{"bad fill", `["bytes"]`, ChunkRepr{Shape: []int{2}, DType: dtype.TypeUint8}, ErrInvalidConfig},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var s []Spec
			err := json.Unmarshal([]byte(tc.js), &s)
			if err == nil {
				_, err = NewChain(s, tc.repr)
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
		})
	}
}

func TestChainIdentity(t *testing.T) {
	tests := []struct {
		js   string
		repr ChunkRepr
		want bool
	}{
		{`[{"name":"bytes","configuration":{"endian":"little"}}]`, reprOf(dtype.TypeFloat64, 3, 3), true},
		{`[{"name":"bytes","configuration":{"endian":"big"}}]`, reprOf(dtype.TypeFloat64, 3, 3), false},
		{`[{"name":"bytes","configuration":{"endian":"big"}}]`, reprOf(dtype.TypeUint8, 3), true},
		{`[{"name":"bytes","configuration":{"endian":"big"}}]`, reprOf(dtype.TypeBool, 3), true},
		{`[{"name":"bytes","configuration":{"endian":"big"}}]`, reprOf(mustRaw(32), 3), true},
		{`[{"name":"bytes","configuration":{"endian":"big"}}]`, reprOf(dtype.TypeComplex64, 3), false},
		{`["bytes"]`, reprOf(dtype.TypeInt8, 3), true},
		{`[{"name":"bytes","configuration":{"endian":"little"}},{"name":"crc32c"}]`, reprOf(dtype.TypeInt8, 3), false},
		{`[{"name":"transpose","configuration":{"order":[0]}},{"name":"bytes","configuration":{"endian":"little"}}]`, reprOf(dtype.TypeInt8, 3), false},
	}
	for _, tc := range tests {
		c, err := NewChain(specs(t, tc.js), tc.repr)
		if err != nil {
			t.Fatalf("%s: %v", tc.js, err)
		}
		if got := c.Identity(); got != tc.want {
			t.Errorf("%s %s: Identity() = %v, want %v", tc.js, tc.repr.DType, got, tc.want)
		}
	}
}

// spyB2B wraps a BytesToBytes codec and records where its last Decode wrote.
type spyB2B struct {
	BytesToBytes
	out []byte
}

func (s *spyB2B) Decode(dst, src []byte, limit int) ([]byte, error) {
	out, err := s.BytesToBytes.Decode(dst, src, limit)
	s.out = out
	return out, err
}

// TestChainZeroCopy checks that with bytes+zstd (and bytes big-endian +
// gzip) the last decoder writes straight into the caller's buffer.
func TestChainZeroCopy(t *testing.T) {
	for _, tc := range []struct {
		endian Endian
		b2b    BytesToBytes
	}{
		{LittleEndian, must(NewZstd(3, true))},
		{BigEndian, must(NewGzip(1))},
		{BigEndian, NewCRC32C()},
	} {
		repr := reprOf(dtype.TypeFloat32, 64, 64)
		spy := &spyB2B{BytesToBytes: tc.b2b}
		c, err := Prepare([]Codec{must(NewBytes(tc.endian)), spy}, repr, PrepareOptions{})
		if err != nil {
			t.Fatal(err)
		}
		src := randomBytes(rand.New(rand.NewPCG(3, 4)), repr.NumBytes())
		enc, err := c.Encode(nil, src)
		if err != nil {
			t.Fatal(err)
		}
		dst := make([]byte, len(src))
		if err := c.Decode(dst, enc); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(dst, src) {
			t.Fatalf("%s: decoded data differs", tc.b2b.Name())
		}
		if unsafe.SliceData(spy.out) != unsafe.SliceData(dst) {
			t.Errorf("%s/%s: last decoder wrote into other memory than the destination", tc.endian, tc.b2b.Name())
		}
	}
	// And the plain path allocates (almost) nothing.
	repr := reprOf(dtype.TypeFloat32, 64, 64)
	c, err := NewChain(specs(t, `[{"name":"bytes","configuration":{"endian":"little"}},{"name":"zstd","configuration":{"level":3,"checksum":true}}]`), repr)
	if err != nil {
		t.Fatal(err)
	}
	src := randomBytes(rand.New(rand.NewPCG(5, 6)), repr.NumBytes())
	enc, _ := c.Encode(nil, src)
	dst := make([]byte, len(src))
	allocs := testing.AllocsPerRun(20, func() {
		if err := c.Decode(dst, enc); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 1 {
		t.Errorf("bytes+zstd chain Decode: %v allocations per run, want at most 1", allocs)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestChainBadInput checks that corrupt chunks are refused with the right
// sentinel through the chain, and that the destination size is checked.
func TestChainBadInput(t *testing.T) {
	repr := reprOf(dtype.TypeInt32, 8, 8)
	src := randomBytes(rand.New(rand.NewPCG(7, 8)), repr.NumBytes())
	chain := func(js string) *Chain {
		c, err := NewChain(specs(t, js), repr)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	encode := func(c *Chain) []byte {
		b, err := c.Encode(nil, src)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	plain := chain(`[{"name":"bytes","configuration":{"endian":"little"}}]`)
	gz := chain(`[{"name":"bytes","configuration":{"endian":"little"}},{"name":"gzip","configuration":{"level":1}}]`)
	zs := chain(`[{"name":"bytes","configuration":{"endian":"little"}},{"name":"zstd","configuration":{"level":1,"checksum":true}}]`)
	crc := chain(`[{"name":"bytes","configuration":{"endian":"big"}},{"name":"zstd","configuration":{"level":1}},{"name":"crc32c"}]`)
	tp := chain(`[{"name":"transpose","configuration":{"order":[1,0]}},{"name":"bytes","configuration":{"endian":"little"}},{"name":"gzip","configuration":{"level":1}}]`)
	flip := func(b []byte, i int) []byte {
		b = slices.Clone(b)
		if i < 0 {
			i += len(b)
		}
		b[i] ^= 0x40
		return b
	}
	// A valid encoding of a chunk that is too large for repr.
	big := reprOf(dtype.TypeInt32, 9, 8)
	bigSrc := make([]byte, big.NumBytes())
	gzBig, _ := must(NewChain(specs(t, `[{"name":"bytes","configuration":{"endian":"little"}},{"name":"gzip","configuration":{"level":1}}]`), big)).Encode(nil, bigSrc)
	zsBig, _ := must(NewChain(specs(t, `[{"name":"bytes","configuration":{"endian":"little"}},{"name":"zstd","configuration":{"level":1}}]`), big)).Encode(nil, bigSrc)
	tests := []struct {
		name string
		c    *Chain
		enc  []byte
		want error
	}{
		{"bytes short", plain, src[:len(src)-1], ErrCorrupt},
		{"bytes long", plain, append(slices.Clone(src), 0), ErrCorrupt},
		{"gzip truncated", gz, encode(gz)[:len(encode(gz))/2], ErrCorrupt},
		{"gzip no trailer", gz, encode(gz)[:len(encode(gz))-8], ErrCorrupt},
		{"gzip crc", gz, flip(encode(gz), -6), ErrChecksum},
		{"gzip too long", gz, gzBig, ErrCorrupt},
		{"gzip empty", gz, nil, ErrCorrupt},
		{"gzip garbage", gz, []byte("not gzip at all"), ErrCorrupt},
		{"zstd truncated", zs, encode(zs)[:len(encode(zs))-5], ErrCorrupt},
		{"zstd checksum", zs, flip(encode(zs), -1), ErrChecksum},
		{"zstd garbage", zs, []byte("definitely not a zstd frame"), ErrCorrupt},
		{"zstd too long", zs, zsBig, ErrCorrupt},
		{"zstd empty", zs, nil, ErrCorrupt},
		{"crc32c mismatch", crc, flip(encode(crc), -2), ErrChecksum},
		{"crc32c data flipped", crc, flip(encode(crc), 5), ErrChecksum},
		{"crc32c short", crc, []byte{1, 2, 3}, ErrCorrupt},
		{"transpose gzip short", tp, must(NewGzip(1)).mustEncode(src[:100]), ErrCorrupt},
	}
	dst := make([]byte, repr.NumBytes())
	for _, tc := range tests {
		err := tc.c.Decode(dst, tc.enc)
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, err, tc.want)
		}
	}
	// Wrong destination and source sizes are errors, not panics.
	if err := plain.Decode(dst[:10], src); err == nil {
		t.Error("Decode into a short destination succeeded")
	}
	if _, err := plain.Encode(nil, src[:10]); err == nil {
		t.Error("Encode of a short chunk succeeded")
	}
}

func (g *Gzip) mustEncode(b []byte) []byte { return must(g.Encode(nil, b)) }

package codecs

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// fuzzLimit bounds decoded sizes in the fuzz targets.
func fuzzLimit(l uint16) int { return int(l) % (1 << 14) }

// checkSentinel fails unless err wraps one of the codec sentinels.
func checkSentinel(t *testing.T, err error) {
	t.Helper()
	if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrChecksum) && !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("error wraps no codec sentinel: %v", err)
	}
}

func FuzzGzipDecode(f *testing.F) {
	g := must(NewGzip(1))
	f.Add(g.mustEncode([]byte("hello hello hello hello")), uint16(100))
	f.Add(append(g.mustEncode([]byte("ab")), g.mustEncode([]byte("cd"))...), uint16(4))
	f.Add(g.mustEncode(make([]byte, 5000)), uint16(100))
	f.Add([]byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff}, uint16(10))
	f.Fuzz(func(t *testing.T, src []byte, l uint16) {
		limit := fuzzLimit(l)
		out, err := g.Decode([]byte("xx"), src, limit)
		if err != nil {
			checkSentinel(t, err)
			return
		}
		if string(out[:2]) != "xx" || len(out)-2 > limit {
			t.Fatalf("decoded %d bytes with limit %d, prefix %q", len(out)-2, limit, out[:2])
		}
		// Differential: with room, the same bytes land in dst's memory.
		dst := make([]byte, 0, limit)
		out2, err := g.Decode(dst, src, limit)
		if err != nil || !bytes.Equal(out2, out[2:]) {
			t.Fatalf("second decode: %v", err)
		}
	})
}

func FuzzZstdDecode(f *testing.F) {
	z := must(NewZstd(3, true))
	f.Add(must(z.Encode(nil, []byte("hello hello hello hello"))), uint16(100))
	f.Add(must(z.Encode(nil, make([]byte, 5000))), uint16(100))
	f.Add(streamedZstd(f, []byte("streamed, no content size")), uint16(100))
	f.Add([]byte{0x28, 0xb5, 0x2f, 0xfd, 0xe0, 0, 0, 0, 0x40, 0, 0, 0, 0, 1, 0, 0}, uint16(100))
	plain, err := zstd.NewReader(nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, src []byte, l uint16) {
		limit := fuzzLimit(l)
		out, err := z.Decode(nil, src, limit)
		if err != nil {
			checkSentinel(t, err)
			return
		}
		if len(out) > limit {
			t.Fatalf("decoded %d bytes with limit %d", len(out), limit)
		}
		// Differential against an unconstrained decoder.
		ref, err := plain.DecodeAll(src, nil)
		if err != nil || !bytes.Equal(ref, out) {
			t.Fatalf("reference decoder: %v, equal %v", err, bytes.Equal(ref, out))
		}
	})
}

func FuzzCRC32CDecode(f *testing.F) {
	c := NewCRC32C()
	f.Add(must(c.Encode(nil, []byte("123456789"))), uint16(9))
	f.Add([]byte{0, 0, 0, 0}, uint16(0))
	f.Add([]byte{1, 2}, uint16(5))
	f.Fuzz(func(t *testing.T, src []byte, l uint16) {
		limit := fuzzLimit(l)
		out, err := c.Decode(nil, src, limit)
		if err != nil {
			checkSentinel(t, err)
			return
		}
		// What decodes re-encodes to the input.
		if re := must(c.Encode(nil, out)); !bytes.Equal(re, src) {
			t.Fatalf("re-encoding differs")
		}
	})
}

func FuzzBytesDecode(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8}, uint8(3), true, uint8(2))
	f.Add([]byte{1, 2, 3}, uint8(0), false, uint8(3))
	f.Add(make([]byte, 32), uint8(13), true, uint8(2))
	f.Fuzz(func(t *testing.T, src []byte, ti uint8, big bool, n uint8) {
		dt := allTypes[int(ti)%len(allTypes)]
		e := LittleEndian
		if big {
			e = BigEndian
		}
		b := must(NewBytes(e))
		repr := reprOf(dt, int(n))
		dst := make([]byte, repr.NumBytes())
		if err := b.Decode(dst, src, repr); err != nil {
			checkSentinel(t, err)
			if len(src) == repr.NumBytes() {
				t.Fatalf("right-sized input refused: %v", err)
			}
			return
		}
		re, err := b.Encode(nil, dst, repr)
		if err != nil || !bytes.Equal(re, src) {
			t.Fatalf("re-encoding: %v", err)
		}
		buf := append([]byte(nil), src...)
		if err := b.DecodeInPlace(buf, repr); err != nil || !bytes.Equal(buf, dst) {
			t.Fatalf("DecodeInPlace differs: %v", err)
		}
	})
}

func FuzzTransposeConfig(f *testing.F) {
	f.Add(`{"order":[1,0]}`, []byte{3, 4})
	f.Add(`{"order":[2,0,1]}`, []byte{2, 3, 4})
	f.Add(`{"order":[0,0]}`, []byte{2, 2})
	f.Add(`{"order":"C"}`, []byte{5})
	f.Add(`{"order":[]}`, []byte{})
	f.Fuzz(func(t *testing.T, cfg string, shapeB []byte) {
		if len(shapeB) > 6 {
			shapeB = shapeB[:6]
		}
		shape := make([]int, len(shapeB))
		for i, s := range shapeB {
			shape[i] = int(s % 7)
		}
		repr := reprOf(allTypes[len(shapeB)%len(allTypes)], shape...)
		c, err := NewChain([]Spec{{Name: "transpose", Configuration: json.RawMessage(cfg)},
			{Name: "bytes", Configuration: json.RawMessage(`{"endian":"big"}`)}}, repr)
		if err != nil {
			if !errors.Is(err, ErrInvalidConfig) {
				t.Fatalf("error wraps no ErrInvalidConfig: %v", err)
			}
			return
		}
		src := make([]byte, repr.NumBytes())
		for i := range src {
			src[i] = byte(i * 7)
		}
		enc, err := c.Encode(nil, src)
		if err != nil {
			t.Fatal(err)
		}
		dec := make([]byte, len(src))
		if err := c.Decode(dec, enc); err != nil || !bytes.Equal(dec, src) {
			t.Fatalf("round trip: %v", err)
		}
	})
}

// fuzzChains are the fixed chains FuzzChainDecode decodes through.
var fuzzChains = []string{
	`[{"name":"bytes","configuration":{"endian":"little"}},{"name":"zstd","configuration":{"level":1,"checksum":false}}]`,
	`[{"name":"bytes","configuration":{"endian":"big"}},{"name":"gzip","configuration":{"level":1}},{"name":"crc32c"}]`,
	`[{"name":"transpose","configuration":{"order":[1,0]}},{"name":"bytes","configuration":{"endian":"little"}},{"name":"zstd","configuration":{"level":1,"checksum":true}},{"name":"crc32c"}]`,
	`[{"name":"transpose","configuration":{"order":[1,0]}},{"name":"bytes","configuration":{"endian":"big"}}]`,
}

func FuzzChainDecode(f *testing.F) {
	repr := reprOf(allTypes[11], 5, 6) // float64
	var chains []*Chain
	for _, js := range fuzzChains {
		chains = append(chains, must(NewChain(specs(f, js), repr)))
	}
	src := make([]byte, repr.NumBytes())
	for i := range src {
		src[i] = byte(i / 3)
	}
	for i, c := range chains {
		f.Add(must(c.Encode(nil, src)), uint8(i))
	}
	f.Add([]byte("garbage"), uint8(1))
	f.Fuzz(func(t *testing.T, enc []byte, ci uint8) {
		c := chains[int(ci)%len(chains)]
		dst := make([]byte, repr.NumBytes())
		if err := c.Decode(dst, enc); err != nil {
			checkSentinel(t, err)
			return
		}
		// Whatever decodes re-encodes and decodes to the same chunk.
		re, err := c.Encode(nil, dst)
		if err != nil {
			t.Fatal(err)
		}
		dst2 := make([]byte, len(dst))
		if err := c.Decode(dst2, re); err != nil || !bytes.Equal(dst, dst2) {
			t.Fatalf("re-encoded chunk: %v", err)
		}
	})
}

// FuzzTransposeDecode decodes arbitrary bytes with any order (valid or
// not) and any chunk shape within limits: bad orders and misfit shapes are
// ErrInvalidConfig, input of the wrong size ErrCorrupt, and a right-sized
// input (the fuzzed bytes cut or padded to size, at any alignment) decodes
// to what an element-by-element reference transposition gives, and
// encodes back to itself.
func FuzzTransposeDecode(f *testing.F) {
	f.Add([]byte{1, 0}, []byte{3, 4}, uint8(3), uint8(0), []byte("twelve int16 elements, 24 bytes"))
	f.Add([]byte{2, 0, 1}, []byte{2, 3, 4}, uint8(11), uint8(1), make([]byte, 200))
	f.Add([]byte{0, 3, 1, 2}, []byte{1, 5, 1, 7}, uint8(0), uint8(5), []byte{1, 2, 3})
	f.Add([]byte{1, 1}, []byte{2, 2}, uint8(2), uint8(0), []byte{})
	f.Add([]byte{0xff}, []byte{4}, uint8(14), uint8(3), []byte("x"))
	f.Add([]byte{1, 0}, []byte{3}, uint8(12), uint8(0), []byte("ndim mismatch"))
	f.Add([]byte{4, 3, 2, 1, 0}, []byte{2, 2, 3, 1, 2}, uint8(13), uint8(2), []byte("complex128 in five dimensions"))
	f.Fuzz(func(t *testing.T, orderB, shapeB []byte, ti, offset uint8, data []byte) {
		if len(orderB) > 8 || len(shapeB) > 8 {
			return
		}
		order := make([]int, len(orderB))
		for i, b := range orderB {
			order[i] = int(int8(b))
		}
		tr, err := NewTranspose(order)
		if err != nil {
			if !errors.Is(err, ErrInvalidConfig) {
				t.Fatalf("NewTranspose(%v): %v", order, err)
			}
			return
		}
		shape := make([]int, len(shapeB))
		n := 1
		for i, b := range shapeB {
			shape[i] = int(b % 17)
			n *= shape[i]
		}
		if n > 1<<12 {
			return
		}
		repr := reprOf(allTypes[int(ti)%len(allTypes)], shape...)
		size := repr.NumBytes()
		dst := make([]byte, size)
		err = tr.Decode(dst, data, repr)
		switch {
		case len(shape) != len(order):
			if !errors.Is(err, ErrInvalidConfig) {
				t.Fatalf("order %v on shape %v: %v, want ErrInvalidConfig", order, shape, err)
			}
			return
		case len(data) != size:
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("%d bytes for a %d-byte chunk: %v, want ErrCorrupt", len(data), size, err)
			}
		case err != nil:
			t.Fatalf("decode: %v", err)
		}
		// The data cut or padded to the chunk's size, at an offset of
		// 0..7 bytes from an aligned buffer.
		off := int(offset % 8)
		buf := make([]byte, size+off)
		src := buf[off:]
		copy(src, data)
		out := make([]byte, size+off)[off:]
		if err := tr.Decode(out, src, repr); err != nil {
			t.Fatalf("decode of %d bytes: %v", size, err)
		}
		// Reference: decoded element x is encoded element j, j[i] = x[order[i]].
		es := repr.DType.Size()
		enc, _ := tr.EncodedRepr(repr)
		idx := make([]int, len(shape))
		for e := range n {
			r := e
			for d := len(shape) - 1; d >= 0; d-- {
				idx[d] = r % shape[d]
				r /= shape[d]
			}
			j := 0
			for i, o := range order {
				j = j*enc.Shape[i] + idx[o]
			}
			if !bytes.Equal(out[e*es:(e+1)*es], src[j*es:(j+1)*es]) {
				t.Fatalf("order %v shape %v: element %v is % x, want % x", order, shape, idx, out[e*es:(e+1)*es], src[j*es:(j+1)*es])
			}
		}
		back := make([]byte, size)
		if err := tr.Encode(back, out, repr); err != nil || !bytes.Equal(back, src) {
			t.Fatalf("encode of the decoded chunk: %v", err)
		}
	})
}

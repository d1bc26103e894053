package codecs_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/gozarr/gozarr/codecs"
	_ "github.com/gozarr/gozarr/codecs/blosc"
	"github.com/gozarr/gozarr/codecs/numcodecs"
	"github.com/gozarr/gozarr/dtype"
)

// fuzzTypes are the data types FuzzChainConfig builds chunks of.
var fuzzTypes = []dtype.DataType{
	dtype.TypeBool, dtype.TypeInt8, dtype.TypeInt16, dtype.TypeInt32, dtype.TypeInt64,
	dtype.TypeUint8, dtype.TypeUint16, dtype.TypeUint32, dtype.TypeUint64,
	dtype.TypeFloat16, dtype.TypeFloat32, dtype.TypeFloat64, dtype.TypeComplex64, dtype.TypeComplex128,
}

// fuzzMaxElems bounds the chunks FuzzChainConfig builds.
const fuzzMaxElems = 1 << 12

// fuzzSpecSeeds are codec chains as zarr-python, numcodecs and other
// writers store them, and broken ones.
var fuzzSpecSeeds = []string{
	`[{"name":"bytes","configuration":{"endian":"little"}},{"name":"gzip","configuration":{"level":-1}}]`,
	`[{"name":"bytes","configuration":{"endian":"big"}},{"name":"zstd","configuration":{"level":100,"checksum":true}},{"name":"crc32c"}]`,
	`[{"name":"transpose","configuration":{"order":[1,0]}},{"name":"bytes","configuration":{"endian":"little"}},{"name":"blosc","configuration":{"cname":"lz4","clevel":5,"shuffle":"shuffle","typesize":4,"blocksize":0}}]`,
	`[{"name":"bytes","configuration":{"endian":"little"}},{"name":"blosc","configuration":{"cname":"zstd","clevel":10,"shuffle":"bitshuffle","blocksize":64}}]`,
	`[{"name":"numcodecs.delta","configuration":{"dtype":"<i4","astype":"<i2"}},{"name":"bytes","configuration":{"endian":"little"}},{"name":"zstd","configuration":{"level":3,"checksum":false}}]`,
	`[{"name":"numcodecs.delta","configuration":{"dtype":"float64","astype":"<f2"}},"bytes",{"name":"numcodecs.zlib","configuration":{"level":10}}]`,
	`[{"name":"bytes","configuration":{"endian":"big"}},{"name":"numcodecs.delta","configuration":{"dtype":">i8","astype":">i1"}},{"name":"numcodecs.shuffle","configuration":{"elementsize":2}},{"name":"numcodecs.lz4","configuration":{"acceleration":-3}}]`,
	`[{"name":"bytes","configuration":{"endian":"little"}},{"name":"numcodecs.gzip","configuration":{"level":9}},{"name":"numcodecs.crc32","configuration":{"location":"end"}},{"name":"numcodecs.adler32"}]`,
	`[{"name":"bytes"},{"name":"numcodecs.bz2","configuration":{"level":0}}]`,
	`[{"name":"numcodecs.shuffle","configuration":{"elementsize":4}},"bytes"]`,
	`["bytes",{"name":"nope"}]`,
	`[{"name":"transpose","configuration":{"order":[0,0]}},"bytes"]`,
}

// fuzzConfigSeeds are configurations FuzzChainConfig gives one codec.
var fuzzConfigSeeds = []string{
	`{"level":-1}`, `{"level":100,"checksum":true}`, `{"order":[1,0]}`, `{"endian":"big"}`,
	`{"cname":"blosclz","clevel":9,"shuffle":"noshuffle","typesize":3,"blocksize":7}`,
	`{"dtype":"<u2","astype":"|u1"}`, `{"dtype":"|b1"}`, `{"elementsize":3}`, `{"acceleration":9}`,
	`{"location":"start"}`, `{}`, `null`,
}

// fuzzNames returns the registered codec names but sharding_indexed's.
func fuzzNames() []string {
	var names []string
	for _, n := range codecs.Registered() {
		if n != "sharding_indexed" {
			names = append(names, n)
		}
	}
	return names
}

// fuzzSpecs returns the chain FuzzChainConfig resolves: js itself when it
// is a JSON array, else the codec names[ci] configured with js, before
// (ci >= 128) or after a little-endian bytes codec.
func fuzzSpecs(js string, ci uint8, names []string) ([]codecs.Spec, bool) {
	var specs []codecs.Spec
	if strings.HasPrefix(js, "[") {
		if json.Unmarshal([]byte(js), &specs) != nil {
			return nil, false
		}
	} else {
		if !json.Valid([]byte(js)) {
			return nil, false
		}
		one := codecs.Spec{Name: names[int(ci&0x7f)%len(names)], Configuration: json.RawMessage(js)}
		b := codecs.Spec{Name: "bytes", Configuration: json.RawMessage(`{"endian":"little"}`)}
		specs = []codecs.Spec{b, one}
		if ci >= 0x80 {
			specs = []codecs.Spec{one, b}
		}
	}
	for _, s := range specs {
		if s.Name == "sharding_indexed" {
			return nil, false
		}
	}
	return specs, true
}

// FuzzChainConfig builds chains from arbitrary codec specs (a whole chain,
// or one codec's configuration; every codec registered with zarr's imports
// but sharding_indexed, fuzzed with the sharding package) for chunks of any data type and a small shape, then
// encodes a chunk and decodes it, and decodes arbitrary bytes. Nothing may
// panic or allocate without bound; errors wrap the codec sentinels; what
// encodes decodes, within MaxEncodedSize, and CheckEncode foretells
// whether Encode fails for its configuration.
func FuzzChainConfig(f *testing.F) {
	for i, s := range fuzzSpecSeeds {
		f.Add(s, uint8(0), uint8(i), []byte{4, 3}, []byte("seed chunk data, seed chunk data"))
	}
	f.Add(fuzzSpecSeeds[4], uint8(0), uint8(3), []byte{10}, []byte{})
	f.Add(fuzzSpecSeeds[2], uint8(0), uint8(3), []byte{0, 7}, []byte{1})
	for i, cfg := range fuzzConfigSeeds {
		f.Add(cfg, uint8(i), uint8(i), []byte{5, 4}, []byte("a configuration of one codec"))
		f.Add(cfg, uint8(i|0x80), uint8(i+3), []byte{6}, []byte{1, 2, 3, 4, 5, 6, 7, 8, 9})
	}
	names := fuzzNames()
	f.Fuzz(func(t *testing.T, js string, ci, ti uint8, shapeB, data []byte) {
		specs, ok := fuzzSpecs(js, ci, names)
		if !ok {
			return
		}
		dt := fuzzTypes[int(ti)%len(fuzzTypes)]
		if len(shapeB) > 4 {
			shapeB = shapeB[:4]
		}
		shape := make([]int, len(shapeB))
		n := 1
		for i, b := range shapeB {
			shape[i] = int(b % 65)
			n *= shape[i]
		}
		if n > fuzzMaxElems {
			return
		}
		fill := make([]byte, dt.Size())
		copy(fill, data)
		repr := codecs.ChunkRepr{Shape: shape, DType: dt, Fill: fill}
		chain, err := codecs.NewChain(specs, repr)
		if err != nil {
			if !errors.Is(err, codecs.ErrInvalidConfig) && !errors.Is(err, codecs.ErrUnknownCodec) {
				t.Fatalf("NewChain error wraps no sentinel: %v", err)
			}
			return
		}
		if _, err := chain.Specs(); err != nil {
			t.Fatalf("Specs: %v", err)
		}
		// Arbitrary bytes as an encoded chunk.
		dst := make([]byte, repr.NumBytes())
		if err := chain.Decode(dst, data); err != nil && !errors.Is(err, codecs.ErrCorrupt) &&
			!errors.Is(err, codecs.ErrChecksum) && !errors.Is(err, codecs.ErrInvalidConfig) {
			t.Fatalf("Decode error wraps no sentinel: %v", err)
		}
		// A chunk of the data, repeated.
		src := make([]byte, repr.NumBytes())
		for i := range src {
			if len(data) > 0 {
				src[i] = data[i%len(data)]
			}
		}
		checkErr := chain.CheckEncode()
		enc, err := chain.Encode(nil, src)
		if err != nil {
			if !errors.Is(err, codecs.ErrInvalidConfig) && !errors.Is(err, numcodecs.ErrUnsupported) {
				t.Fatalf("Encode error wraps no sentinel: %v", err)
			}
			if checkErr == nil && !errors.Is(err, codecs.ErrInvalidConfig) {
				t.Fatalf("CheckEncode passed, Encode: %v", err)
			}
			return
		}
		if checkErr != nil {
			t.Fatalf("CheckEncode: %v, but Encode succeeded", checkErr)
		}
		if len(enc) > chain.MaxEncodedSize() {
			t.Fatalf("encoded %d bytes, MaxEncodedSize %d", len(enc), chain.MaxEncodedSize())
		}
		if err := chain.Decode(dst, enc); err != nil {
			t.Fatalf("decoding our own encoding: %v", err)
		}
		out, err := chain.DecodeNew(enc)
		if err != nil || !bytes.Equal(out, dst) {
			t.Fatalf("DecodeNew: %v, equal %v", err, bytes.Equal(out, dst))
		}
	})
}

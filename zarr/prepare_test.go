package zarr_test

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/store/mem"
	"github.com/gozarr/gozarr/zarr"
)

// countingBytes is the bytes codec (little-endian) that counts how often
// it is prepared, and how often it is asked to encode or decode without
// being prepared (a representation passed per call).
type countingBytes struct {
	*codecs.Bytes
	prepares, unprepared atomic.Int64
}

var counting = func() *countingBytes {
	b, err := codecs.NewBytes(codecs.LittleEndian)
	if err != nil {
		panic(err)
	}
	c := &countingBytes{Bytes: b}
	codecs.Register("gozarr.test.counting_bytes", func(json.RawMessage) (codecs.Codec, error) { return c, nil })
	return c
}()

func (c *countingBytes) Name() string       { return "gozarr.test.counting_bytes" }
func (c *countingBytes) Configuration() any { return nil }

func (c *countingBytes) PrepareArrayToBytes(repr codecs.ChunkRepr, opts codecs.PrepareOptions) (codecs.PreparedArrayToBytes, error) {
	c.prepares.Add(1)
	return c.Bytes.PrepareArrayToBytes(repr, opts)
}

func (c *countingBytes) Decode(dst, src []byte, repr codecs.ChunkRepr) error {
	c.unprepared.Add(1)
	return c.Bytes.Decode(dst, src, repr)
}

func (c *countingBytes) Encode(dst, src []byte, repr codecs.ChunkRepr) ([]byte, error) {
	c.unprepared.Add(1)
	return c.Bytes.Encode(dst, src, repr)
}

// TestPreparedOnce: an array's codecs are prepared when it is opened, once
// for each level of nested sharding, and every chunk of every shard is
// then decoded and encoded by the prepared value: reading and writing all
// 64 inner chunks of 4 shards (two levels deep) prepares nothing again and
// never hands a codec its representation per chunk. Before, the sharding
// codec looked its layout up per shard representation (a map keyed by a
// string built per call) and codecs took the representation on every call.
func TestPreparedOnce(t *testing.T) {
	ctx := context.Background()
	st := mem.New()
	inner := `{"name":"sharding_indexed","configuration":{"chunk_shape":[2,2],
		"codecs":[{"name":"gozarr.test.counting_bytes"}],
		"index_codecs":[{"name":"bytes","configuration":{"endian":"little"}},{"name":"crc32c"}]}}`
	meta := `{"zarr_format":3,"node_type":"array","shape":[16,16],"data_type":"int32",
		"chunk_grid":{"name":"regular","configuration":{"chunk_shape":[8,8]}},
		"chunk_key_encoding":{"name":"default","configuration":{"separator":"/"}},
		"fill_value":0,"codecs":[{"name":"sharding_indexed","configuration":{"chunk_shape":[4,4],
		"codecs":[` + inner + `],
		"index_codecs":[{"name":"bytes","configuration":{"endian":"little"}},{"name":"crc32c"}]}}]}`
	if err := st.Set(ctx, "a/zarr.json", []byte(meta)); err != nil {
		t.Fatal(err)
	}
	before := counting.prepares.Load()
	a, err := zarr.OpenArray(ctx, st, "a")
	if err != nil {
		t.Fatal(err)
	}
	opened := counting.prepares.Load() - before
	if opened != 1 {
		t.Errorf("opening prepared the innermost codec %d times, want 1 (once per level, not per shape seen)", opened)
	}
	vals := make([]int32, 256)
	for i := range vals {
		vals[i] = int32(i*7 - 100)
	}
	if err := zarr.Write(ctx, a, vals); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		got, _, err := zarr.Read[int32](ctx, a, nd.Range(0, 16), nd.Range(0, 16))
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, vals) {
			t.Fatalf("read back %v, want %v", got[:8], vals[:8])
		}
	}
	if n := counting.prepares.Load() - before; n != opened {
		t.Errorf("reads and writes prepared the codec %d more times, want 0", n-opened)
	}
	if n := counting.unprepared.Load(); n != 0 {
		t.Errorf("%d encodes or decodes were passed the representation, want 0 (all through the prepared codec)", n)
	}
}

// TestV2MappingRegistered: a v2 compressor or filter maps to the v3 codec
// its package registered (codecs.RegisterV2), so zarr knows no codec's v2
// form: a mapping registered here is used for both places, blosc's (from
// codecs/blosc) fills in numcodecs' defaults, and an id with no mapping is
// "numcodecs.<id>".
func TestV2MappingRegistered(t *testing.T) {
	codecs.RegisterV2("gozarr_test_v2", func(object json.RawMessage, typesize int) (codecs.Spec, bool, error) {
		var o struct {
			ID    string `json:"id"`
			Level int    `json:"level"`
		}
		if err := json.Unmarshal(object, &o); err != nil {
			return codecs.Spec{}, false, err
		}
		return codecs.Spec{Name: "gzip", Configuration: json.RawMessage(`{"level":` + strconv.Itoa(o.Level+typesize) + `}`)}, true, nil
	})
	zarray := `{"zarr_format":2,"shape":[4],"chunks":[4],"dtype":"<i2","fill_value":0,"order":"C",
		"filters":[{"id":"gozarr_test_v2","level":1},{"id":"zlib","level":1}],
		"compressor":{"id":"blosc","cname":"zstd"}}`
	m, err := zarr.ParseArrayMetadataV2([]byte(zarray), nil)
	if err != nil {
		t.Fatal(err)
	}
	v3, err := m.ToV3()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range v3.Codecs {
		got = append(got, s.Name+" "+string(s.Configuration))
	}
	want := []string{`bytes {"endian":"little"}`, `gzip {"level":3}`, `numcodecs.zlib {"level":1}`,
		`blosc {"typesize":2,"cname":"zstd","clevel":5,"shuffle":"shuffle","blocksize":0}`}
	if !slices.Equal(got, want) {
		t.Errorf("codecs\n%q\nwant\n%q", got, want)
	}
}

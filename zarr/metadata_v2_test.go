package zarr

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/dtype"
)

func TestRefdataV2Arrays(t *testing.T) {
	cases, _ := loadManifest(t)
	n := 0
	for _, c := range cases {
		if c.ZarrFormat != 2 {
			continue
		}
		n++
		t.Run(c.Name, func(t *testing.T) {
			dir := filepath.Join(refdata, c.Path)
			zarray := readFile(t, dir, ".zarray")
			zattrs, _ := os.ReadFile(filepath.Join(dir, ".zattrs"))
			m, err := ParseArrayMetadataV2(zarray, zattrs)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(m.Shape, c.Shape) && !(len(m.Shape) == 0 && len(c.Shape) == 0) {
				t.Errorf("shape %v, manifest %v", m.Shape, c.Shape)
			}
			if !reflect.DeepEqual(m.Chunks, c.ChunkShape) && !(len(m.Chunks) == 0 && len(c.ChunkShape) == 0) {
				t.Errorf("chunks %v, manifest %v", m.Chunks, c.ChunkShape)
			}
			if m.DType != c.DType {
				t.Errorf("dtype %s, manifest %s", m.DType, c.DType)
			}
			if m.BigEndian != (strings.HasPrefix(c.DType, ">") && m.DataType.SwapUnit() > 1) {
				t.Errorf("big endian %v for %s", m.BigEndian, c.DType)
			}
			if m.DimensionSeparator != c.DimensionSeparator {
				t.Errorf("separator %q, manifest %q", m.DimensionSeparator, c.DimensionSeparator)
			}
			wantFill, ok, err := dtype.ParseFillV2(m.DataType, c.FillValue)
			if err != nil {
				t.Fatalf("manifest fill %s: %v", c.FillValue, err)
			}
			if ok != (m.FillValue != nil) || !bytes.Equal(m.FillValue, wantFill) {
				t.Errorf("fill %x, manifest %s", m.FillValue, c.FillValue)
			}
			var mc struct {
				Filters    json.RawMessage `json:"filters"`
				Compressor json.RawMessage `json:"compressor"`
				Order      string          `json:"order"`
			}
			if err := json.Unmarshal(c.Codecs, &mc); err != nil {
				t.Fatal(err)
			}
			if m.Order != mc.Order {
				t.Errorf("order %s, manifest %s", m.Order, mc.Order)
			}
			if m.Compressor == nil {
				if string(mc.Compressor) != "null" {
					t.Errorf("no compressor, manifest %s", mc.Compressor)
				}
			} else if !jsonEqual(t, m.Compressor.Object, mc.Compressor) {
				t.Errorf("compressor %s, manifest %s", m.Compressor.Object, mc.Compressor)
			}
			if string(mc.Filters) == "null" {
				if m.Filters != nil {
					t.Errorf("filters %v, manifest null", m.Filters)
				}
			} else {
				var fs []json.RawMessage
				_ = json.Unmarshal(mc.Filters, &fs)
				if len(fs) != len(m.Filters) {
					t.Fatalf("%d filters, manifest %s", len(m.Filters), mc.Filters)
				}
				for i := range fs {
					if !jsonEqual(t, fs[i], m.Filters[i].Object) {
						t.Errorf("filter %d %s, manifest %s", i, m.Filters[i].Object, fs[i])
					}
				}
			}
			attrs, _ := json.Marshal(m.Attributes)
			if !jsonEqual(t, attrs, c.Attributes) {
				t.Errorf("attributes %s, manifest %s", attrs, c.Attributes)
			}
			// Round trip.
			out, err := m.Marshal()
			if err != nil {
				t.Fatal(err)
			}
			if !jsonEqual(t, out, zarray) {
				t.Errorf("Marshal:\n%s\nzarr-python:\n%s", out, zarray)
			}
			m2, err := ParseArrayMetadataV2(out, zattrs)
			if err != nil || !reflect.DeepEqual(m, m2) {
				t.Errorf("re-parse: %v\n%+v\n%+v", err, m, m2)
			}
			// The v3 view is valid and marshals.
			v3, err := m.ToV3()
			if err != nil {
				t.Fatalf("ToV3: %v", err)
			}
			if v3.ChunkKeyEncoding != V2KeyEncoding(c.DimensionSeparator) {
				t.Errorf("v3 key encoding %+v", v3.ChunkKeyEncoding)
			}
			if _, err := v3.Marshal(); err != nil {
				t.Errorf("v3 Marshal: %v", err)
			}
		})
	}
	if n < 50 {
		t.Errorf("only %d v2 cases", n)
	}
}

// TestToV3Codecs pins the v2 -> v3 codec mapping on reference arrays.
func TestToV3Codecs(t *testing.T) {
	cases := []struct {
		name   string
		codecs string
		key    string // key of chunk (1, 2, ...) or of the 0-d chunk
		fill   string
	}{
		{"v2_order_F_2d", `[{"name":"transpose","configuration":{"order":[1,0]}},{"name":"bytes","configuration":{"endian":"little"}},{"name":"zstd","configuration":{"level":1,"checksum":false}}]`, "1.2", "0.0"},
		{"v2_order_F_3d_blosc", `[{"name":"transpose","configuration":{"order":[2,1,0]}},{"name":"bytes","configuration":{"endian":"little"}},{"name":"blosc","configuration":{"typesize":4,"cname":"lz4","clevel":5,"shuffle":"shuffle","blocksize":0}}]`, "1.2.3", "0"},
		{"v2_bigendian_int16", `[{"name":"bytes","configuration":{"endian":"big"}}]`, "1.2", "0"},
		{"v2_bigendian_complex64", `[{"name":"bytes","configuration":{"endian":"big"}}]`, "1.2", "[0.0, 0.0]"},
		{"v2_dtype_bool", `[{"name":"bytes"},{"name":"numcodecs.zlib","configuration":{"level":1}}]`, "1.2", "false"},
		{"v2_blosc_lz4hc_autoshuffle", `[{"name":"bytes","configuration":{"endian":"little"}},{"name":"blosc","configuration":{"typesize":4,"cname":"lz4hc","clevel":5,"shuffle":"shuffle","blocksize":0}}]`, "1.2", "0"},
		{"v2_blosc_zstd_bitshuffle", `[{"name":"bytes","configuration":{"endian":"little"}},{"name":"blosc","configuration":{"typesize":2,"cname":"zstd","clevel":3,"shuffle":"bitshuffle","blocksize":0}}]`, "1.2", "0"},
		{"v2_blosc_blosclz_noshuffle", `[{"name":"bytes"},{"name":"blosc","configuration":{"typesize":1,"cname":"blosclz","clevel":9,"shuffle":"noshuffle","blocksize":0}}]`, "1.2", "0"},
		{"v2_gzip", `[{"name":"bytes","configuration":{"endian":"little"}},{"name":"gzip","configuration":{"level":5}}]`, "1.2", "0.0"},
		{"v2_zstd_checksum", `[{"name":"bytes","configuration":{"endian":"little"}},{"name":"zstd","configuration":{"level":1,"checksum":true}}]`, "1.2", "0.0"},
		{"v2_lz4", `[{"name":"bytes","configuration":{"endian":"little"}},{"name":"numcodecs.lz4","configuration":{"acceleration":1}}]`, "1.2", "0.0"},
		{"v2_filter_delta_astype", `[{"name":"bytes","configuration":{"endian":"little"}},{"name":"numcodecs.delta","configuration":{"astype":"<i2","dtype":"<i8"}},{"name":"zstd","configuration":{"level":1,"checksum":false}}]`, "1", "0"},
		{"v2_filter_shuffle", `[{"name":"bytes","configuration":{"endian":"little"}},{"name":"numcodecs.shuffle","configuration":{"elementsize":4}},{"name":"numcodecs.zlib","configuration":{"level":5}}]`, "1.2", "0.0"},
		{"v2_scalar", `[{"name":"bytes","configuration":{"endian":"little"}}]`, "0", "0.0"},
		{"v2_sep_slash", `[{"name":"bytes","configuration":{"endian":"little"}},{"name":"numcodecs.zlib","configuration":{"level":1}}]`, "1/2/3", "0.0"},
		{"v2_fill_null", `[{"name":"bytes","configuration":{"endian":"little"}},{"name":"numcodecs.zlib","configuration":{"level":1}}]`, "1.2", "0"},
		{"v2_fill_nan", `[{"name":"bytes","configuration":{"endian":"little"}},{"name":"zstd","configuration":{"level":1,"checksum":false}}]`, "1.2", `"NaN"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(refdata, c.name+".zarr")
			zattrs, _ := os.ReadFile(filepath.Join(dir, ".zattrs"))
			m, err := ParseArrayMetadataV2(readFile(t, dir, ".zarray"), zattrs)
			if err != nil {
				t.Fatal(err)
			}
			v3 := toV3Codecs(t, m, c.codecs)
			coords := []int{1, 2, 3}[:len(m.Shape)]
			if k := v3.ChunkKeyEncoding.Key(coords); k != c.key {
				t.Errorf("key of %v = %q, want %q", coords, k, c.key)
			}
			if fj, _ := dtype.FormatFill(v3.DataType, v3.FillValue); string(fj) != c.fill {
				t.Errorf("v3 fill %s, want %s", fj, c.fill)
			}
		})
	}
}

// toV3Codecs translates m to v3 and checks its codec list against want
// (JSON).
func toV3Codecs(t *testing.T, m *ArrayMetadataV2, want string) *ArrayMetadata {
	t.Helper()
	v3, err := m.ToV3()
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := json.Marshal(v3.Codecs); !jsonEqual(t, got, []byte(want)) {
		t.Errorf("codecs\n%s\nwant\n%s", got, want)
	}
	return v3
}

const validV2 = `{"zarr_format": 2, "shape": [10, 20], "chunks": [5, 5], "dtype": "<i4",
 "fill_value": 0, "order": "C", "filters": null, "compressor": {"id": "zlib", "level": 1},
 "dimension_separator": "."}`

func editV2(t testing.TB, kv ...string) []byte {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(validV2), &m); err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == "" {
			delete(m, kv[i])
		} else {
			m[kv[i]] = json.RawMessage(kv[i+1])
		}
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestParseV2Variants(t *testing.T) {
	// Optional fields take their defaults.
	m, err := ParseArrayMetadataV2(editV2(t, "order", "", "dimension_separator", "", "compressor", "",
		"filters", "", "fill_value", "", "extra", `"ignored"`), nil)
	if err != nil {
		t.Fatal(err)
	}
	if m.Order != "C" || m.DimensionSeparator != "." || m.Compressor != nil || m.Filters != nil || m.FillValue != nil {
		t.Errorf("defaults: %+v", m)
	}
	// Auto-shuffle of one-byte items is bitshuffle; typesize follows astype.
	m, err = ParseArrayMetadataV2(editV2(t, "dtype", `"|u1"`,
		"compressor", `{"id": "blosc", "cname": "zstd", "clevel": 1, "shuffle": -1}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	v3, err := m.ToV3()
	if err != nil {
		t.Fatal(err)
	}
	if got := string(v3.Codecs[1].Configuration); got != `{"typesize":1,"cname":"zstd","clevel":1,"shuffle":"bitshuffle","blocksize":0}` {
		t.Errorf("blosc config %s", got)
	}
	m, err = ParseArrayMetadataV2(editV2(t, "dtype", `"<i8"`,
		"filters", `[{"id": "delta", "dtype": "<i8", "astype": "<i2"}]`,
		"compressor", `{"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1, "blocksize": 0}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	if v3, err = m.ToV3(); err != nil || !strings.Contains(string(v3.Codecs[2].Configuration), `"typesize":2`) {
		t.Errorf("typesize after astype: %s, %v", v3.Codecs[2].Configuration, err)
	}
	// A known compressor with fields gozarr does not know stays numcodecs.
	m, _ = ParseArrayMetadataV2(editV2(t, "compressor", `{"id": "zstd", "level": 3, "future": true}`), nil)
	if v3, err = m.ToV3(); err != nil || v3.Codecs[1].Name != "numcodecs.zstd" {
		t.Errorf("zstd with unknown field: %+v, %v", v3.Codecs, err)
	}
	// xarray dimension names.
	m, err = ParseArrayMetadataV2([]byte(validV2), []byte(`{"_ARRAY_DIMENSIONS": ["y", "x"], "units": "m"}`))
	if err != nil {
		t.Fatal(err)
	}
	if v3, err = m.ToV3(); err != nil || len(v3.DimensionNames) != 2 || *v3.DimensionNames[1] != "x" {
		t.Errorf("dimension names from _ARRAY_DIMENSIONS: %v, %v", v3.DimensionNames, err)
	}
	// Big-endian fill values are read in memory (little-endian) order.
	m, err = ParseArrayMetadataV2(editV2(t, "dtype", `">i4"`, "fill_value", `-2`), nil)
	if err != nil || !m.BigEndian || !bytes.Equal(m.FillValue, []byte{0xfe, 0xff, 0xff, 0xff}) {
		t.Errorf("big-endian fill: %+v, %v", m, err)
	}
	// Attributes: v2 groups.
	g, err := ParseGroupMetadataV2([]byte(`{"zarr_format": 2}`), []byte(`{"a": 18446744073709551615}`))
	if err != nil || g.Attributes["a"] != json.Number("18446744073709551615") {
		t.Errorf("v2 group: %+v, %v", g, err)
	}
	out, err := MarshalAttributes(g.Attributes)
	if err != nil || !jsonEqual(t, out, []byte(`{"a": 18446744073709551615}`)) {
		t.Errorf("MarshalAttributes = %s, %v", out, err)
	}
}

func TestParseV2Errors(t *testing.T) {
	cases := []struct {
		name   string
		zarray []byte
		zattrs string
		want   error
	}{
		{"truncated", []byte(validV2[:40]), "", ErrInvalidMetadata},
		{"zarr_format 3", editV2(t, "zarr_format", `3`), "", ErrInvalidMetadata},
		{"zarr_format missing", editV2(t, "zarr_format", ``), "", ErrInvalidMetadata},
		{"shape missing", editV2(t, "shape", ``), "", ErrInvalidMetadata},
		{"chunks missing", editV2(t, "chunks", ``), "", ErrInvalidMetadata},
		{"dtype missing", editV2(t, "dtype", ``), "", ErrInvalidMetadata},
		{"negative shape", editV2(t, "shape", `[-10, 20]`), "", ErrInvalidMetadata},
		{"zero chunk", editV2(t, "chunks", `[0, 5]`), "", ErrInvalidMetadata},
		{"chunk rank mismatch", editV2(t, "chunks", `[5]`), "", ErrInvalidMetadata},
		{"absurd chunk", editV2(t, "chunks", `[1073741824, 1073741824]`), "", ErrInvalidMetadata},
		{"structured dtype", editV2(t, "dtype", `[["a", "<i4"], ["b", "<f8"]]`), "", ErrUnsupported},
		{"empty unicode dtype", editV2(t, "dtype", `"<U0"`), "", ErrUnsupported},
		{"object dtype", editV2(t, "dtype", `"|O"`), "", ErrUnsupported},
		{"datetime dtype with a bad unit", editV2(t, "dtype", `"<M8[xs]"`), "", ErrUnsupported},
		{"bad order", editV2(t, "order", `"K"`), "", ErrInvalidMetadata},
		{"order not string", editV2(t, "order", `1`), "", ErrInvalidMetadata},
		{"bad separator", editV2(t, "dimension_separator", `"-"`), "", ErrInvalidMetadata},
		{"compressor without id", editV2(t, "compressor", `{"level": 1}`), "", ErrInvalidMetadata},
		{"compressor not object", editV2(t, "compressor", `"zlib"`), "", ErrInvalidMetadata},
		{"filters not array", editV2(t, "filters", `{"id": "delta"}`), "", ErrInvalidMetadata},
		{"filter without id", editV2(t, "filters", `[{"dtype": "<i4"}]`), "", ErrInvalidMetadata},
		{"fill out of range", editV2(t, "fill_value", `4294967296`), "", ErrInvalidMetadata},
		{"fill wrong type", editV2(t, "fill_value", `"abc"`), "", ErrInvalidMetadata},
		{"zattrs not object", []byte(validV2), `[1]`, ErrInvalidMetadata},
		{"zattrs truncated", []byte(validV2), `{"a":`, ErrInvalidMetadata},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var zattrs []byte
			if c.zattrs != "" {
				zattrs = []byte(c.zattrs)
			}
			m, err := ParseArrayMetadataV2(c.zarray, zattrs)
			if !errors.Is(err, c.want) || m != nil {
				t.Fatalf("ParseArrayMetadataV2 = %+v, %v; want %v", m, err, c.want)
			}
		})
	}
	for _, doc := range []string{`{"zarr_format": 3}`, `{}`, `[`, `{"zarr_format": "2"}`} {
		if _, err := ParseGroupMetadataV2([]byte(doc), nil); !errors.Is(err, ErrInvalidMetadata) {
			t.Errorf("ParseGroupMetadataV2(%s) error %v", doc, err)
		}
	}
}

// TestV2RawFillsAndChecksums pins the v2 -> v3 translation of raw types
// (finding 14: a bytes codec with an endian for every type wider than a
// byte), their fill values as zarr-python writes and wrote them (finding
// 15) and numcodecs' crc32c (finding 17).
func TestV2RawFillsAndChecksums(t *testing.T) {
	cases := []struct {
		name, dtype, fill string
		filters, comp     string
		wantFill          string // hex; "" with wantErr
		wantCodecs        string
		wantErr           error
	}{
		{"S5 null", `"|S5"`, `null`, `null`, `null`, "0000000000", `[{"name":"bytes","configuration":{"endian":"little"}}]`, nil},
		{"V8 null", `"|V8"`, `null`, `null`, `null`, "0000000000000000", `[{"name":"bytes","configuration":{"endian":"little"}}]`, nil},
		{"S1 null", `"|S1"`, `null`, `null`, `null`, "00", `[{"name":"bytes"}]`, nil},
		{"S7 empty", `"|S7"`, `""`, `null`, `null`, "00000000000000", `[{"name":"bytes","configuration":{"endian":"little"}}]`, nil},
		{"S3 short", `"|S3"`, `"eg=="`, `null`, `null`, "7a0000", `[{"name":"bytes","configuration":{"endian":"little"}}]`, nil},
		{"V4 short", `"|V4"`, `"AQI="`, `null`, `null`, "01020000", `[{"name":"bytes","configuration":{"endian":"little"}}]`, nil},
		{"S3 whole", `"|S3"`, `"YWJj"`, `null`, `null`, "616263", `[{"name":"bytes","configuration":{"endian":"little"}}]`, nil},
		{"S1 zero", `"|S1"`, `0`, `null`, `null`, "30", `[{"name":"bytes"}]`, nil},
		{"S3 negative", `"S3"`, `-7`, `null`, `null`, "2d3700", `[{"name":"bytes","configuration":{"endian":"little"}}]`, nil},
		{"S1 minus zero", `"|S1"`, `-0`, `null`, `null`, "30", `[{"name":"bytes"}]`, nil},
		{"S1 too long", `"|S1"`, `12`, `null`, `null`, "", "", ErrInvalidMetadata},
		{"S3 base64 too long", `"|S3"`, `"YWJjZA=="`, `null`, `null`, "", "", ErrInvalidMetadata},
		{"S3 bad base64", `"|S3"`, `"*"`, `null`, `null`, "", "", ErrInvalidMetadata},
		{"S4 float", `"|S4"`, `1.5`, `null`, `null`, "", "", ErrInvalidMetadata},
		{"V8 number", `"|V8"`, `0`, `null`, `null`, "", "", ErrInvalidMetadata},
		{"crc32c compressor", `"<i2"`, `0`, `null`, `{"id":"crc32c"}`, "0000",
			`[{"name":"bytes","configuration":{"endian":"little"}},{"name":"crc32c"}]`, nil},
		{"crc32c at end", `"<i2"`, `0`, `null`, `{"id":"crc32c","location":"end"}`, "0000",
			`[{"name":"bytes","configuration":{"endian":"little"}},{"name":"crc32c"}]`, nil},
		{"crc32c at start", `"<i2"`, `0`, `null`, `{"id":"crc32c","location":"start"}`, "0000",
			`[{"name":"bytes","configuration":{"endian":"little"}},{"name":"numcodecs.crc32c","configuration":{"location":"start"}}]`, nil},
		{"crc32c filter", `">i4"`, `0`, `[{"id":"crc32c"}]`, `{"id":"zlib","level":1}`, "00000000",
			`[{"name":"bytes","configuration":{"endian":"big"}},{"name":"crc32c"},{"name":"numcodecs.zlib","configuration":{"level":1}}]`, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := ParseArrayMetadataV2(editV2(t, "dtype", c.dtype, "fill_value", c.fill,
				"filters", c.filters, "compressor", c.comp), nil)
			if c.wantErr != nil {
				if !errors.Is(err, c.wantErr) {
					t.Fatalf("parse = %+v, %v; want %v", m, err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			v3 := toV3Codecs(t, m, c.wantCodecs)
			if fmt.Sprintf("%x", v3.FillValue) != c.wantFill {
				t.Errorf("fill %x, want %s", v3.FillValue, c.wantFill)
			}
			if _, err := codecs.NewChain(v3.Codecs, v3.ChunkRepr()); err != nil {
				t.Errorf("chain: %v", err)
			}
		})
	}
}

// TestV2ScalarMarshal: the v3 view of a 0-d v2 array marshals with shapes
// [] (not null) and parses back (found by FuzzV2ToV3).
func TestV2ScalarMarshal(t *testing.T) {
	m, err := ParseArrayMetadataV2(editV2(t, "shape", `[]`, "chunks", `[]`), nil)
	if err != nil {
		t.Fatal(err)
	}
	v3, err := m.ToV3()
	if err != nil {
		t.Fatal(err)
	}
	doc, err := v3.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	back, err := ParseArrayMetadata(doc)
	if err != nil || back.NDim() != 0 {
		t.Fatalf("re-parse: %+v, %v\n%s", back, err, doc)
	}
	if !strings.Contains(string(doc), `"shape": []`) || !strings.Contains(string(doc), `"chunk_shape": []`) {
		t.Errorf("0-d shapes not written []:\n%s", doc)
	}
}

package zarr

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/dtype"
)

const refdata = "../testdata/refdata"

// manifestCase is the part of a refdata manifest case these tests check.
type manifestCase struct {
	Name               string          `json:"name"`
	ZarrFormat         int             `json:"zarr_format"`
	Path               string          `json:"path"`
	Shape              []int           `json:"shape"`
	DType              string          `json:"dtype"`
	ChunkShape         []int           `json:"chunk_shape"`
	ShardShape         []int           `json:"shard_shape"`
	Codecs             json.RawMessage `json:"codecs"`
	FillValue          json.RawMessage `json:"fill_value"`
	ChunkKeyEncoding   json.RawMessage `json:"chunk_key_encoding"`
	DimensionSeparator string          `json:"dimension_separator"`
	DimensionNames     []*string       `json:"dimension_names"`
	Attributes         json.RawMessage `json:"attributes"`
}

type manifestGroup struct {
	Name       string `json:"name"`
	ZarrFormat int    `json:"zarr_format"`
	Path       string `json:"path"`
	Nodes      []struct {
		Path       string          `json:"path"`
		NodeType   string          `json:"node_type"`
		Attributes json.RawMessage `json:"attributes"`
	} `json:"nodes"`
}

func loadManifest(t testing.TB) ([]manifestCase, []manifestGroup) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(refdata, "manifest.json"))
	if err != nil {
		t.Fatalf("reference corpus: %v", err)
	}
	var m struct {
		Cases  []manifestCase  `json:"cases"`
		Groups []manifestGroup `json:"groups"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if len(m.Cases) < 100 {
		t.Fatalf("manifest lists only %d cases", len(m.Cases))
	}
	return m.Cases, m.Groups
}

// jsonValue decodes JSON for semantic comparison (numbers as json.Number).
func jsonValue(t testing.TB, b []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("decoding %s: %v", b, err)
	}
	return v
}

func jsonEqual(t testing.TB, a, b []byte) bool {
	t.Helper()
	return reflect.DeepEqual(jsonValue(t, a), jsonValue(t, b))
}

func readFile(t testing.TB, parts ...string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(parts...))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestRefdataV3Arrays(t *testing.T) {
	cases, _ := loadManifest(t)
	n := 0
	for _, c := range cases {
		if c.ZarrFormat != 3 {
			continue
		}
		n++
		t.Run(c.Name, func(t *testing.T) {
			doc := readFile(t, refdata, c.Path, "zarr.json")
			if nt, err := ParseNodeType(doc); err != nil || nt != NodeArray {
				t.Fatalf("ParseNodeType = %q, %v", nt, err)
			}
			m, err := ParseArrayMetadata(doc)
			if err != nil {
				t.Fatal(err)
			}
			// Key fields against the manifest.
			if !reflect.DeepEqual(m.Shape, c.Shape) && !(len(m.Shape) == 0 && len(c.Shape) == 0) {
				t.Errorf("shape %v, manifest %v", m.Shape, c.Shape)
			}
			if m.DataType.Name() != c.DType {
				t.Errorf("data type %s, manifest %s", m.DataType, c.DType)
			}
			grid := c.ChunkShape
			if c.ShardShape != nil {
				grid = c.ShardShape
			}
			if !reflect.DeepEqual(m.ChunkShape, grid) && !(len(m.ChunkShape) == 0 && len(grid) == 0) {
				t.Errorf("chunk grid %v, manifest %v", m.ChunkShape, grid)
			}
			wantFill, err := dtype.ParseFill(m.DataType, c.FillValue)
			if err != nil {
				t.Fatalf("manifest fill %s: %v", c.FillValue, err)
			}
			if !bytes.Equal(m.FillValue, wantFill) {
				t.Errorf("fill %x, manifest %s = %x", m.FillValue, c.FillValue, wantFill)
			}
			if fj, err := dtype.FormatFill(m.DataType, m.FillValue); err != nil || !jsonEqual(t, fj, c.FillValue) {
				t.Errorf("FormatFill = %s, %v; zarr-python wrote %s", fj, err, c.FillValue)
			}
			if !reflect.DeepEqual(m.DimensionNames, c.DimensionNames) {
				t.Errorf("dimension names %v, manifest %v", m.DimensionNames, c.DimensionNames)
			}
			cke, _ := json.Marshal(m.ChunkKeyEncoding)
			if !jsonEqual(t, cke, c.ChunkKeyEncoding) {
				t.Errorf("chunk key encoding %s, manifest %s", cke, c.ChunkKeyEncoding)
			}
			cs, _ := json.Marshal(m.Codecs)
			if !jsonEqual(t, cs, c.Codecs) {
				t.Errorf("codecs %s, manifest %s", cs, c.Codecs)
			}
			attrs, _ := json.Marshal(m.Attributes)
			if !jsonEqual(t, attrs, c.Attributes) {
				t.Errorf("attributes %s, manifest %s", attrs, c.Attributes)
			}
			// Round trip: Marshal re-parses to an equal value and says
			// what zarr-python wrote.
			out, err := m.Marshal()
			if err != nil {
				t.Fatal(err)
			}
			if !jsonEqual(t, out, doc) {
				t.Errorf("Marshal differs from zarr-python's document:\n%s\nvs\n%s", out, doc)
			}
			m2, err := ParseArrayMetadata(out)
			if err != nil {
				t.Fatalf("re-parse: %v\n%s", err, out)
			}
			if !reflect.DeepEqual(m, m2) {
				t.Errorf("re-parsed metadata differs:\n%+v\n%+v", m, m2)
			}
		})
	}
	if n < 80 {
		t.Errorf("only %d v3 cases", n)
	}
}

func TestRefdataGroups(t *testing.T) {
	_, groups := loadManifest(t)
	if len(groups) != 2 {
		t.Fatalf("%d groups in the manifest", len(groups))
	}
	for _, g := range groups {
		for _, node := range g.Nodes {
			if node.NodeType != "group" {
				continue
			}
			t.Run(g.Name+"/"+node.Path, func(t *testing.T) {
				dir := filepath.Join(refdata, g.Path, node.Path)
				var gm *GroupMetadata
				var err error
				if g.ZarrFormat == 3 {
					doc := readFile(t, dir, "zarr.json")
					if nt, err := ParseNodeType(doc); err != nil || nt != NodeGroup {
						t.Fatalf("ParseNodeType = %q, %v", nt, err)
					}
					if _, err := ParseArrayMetadata(doc); !errors.Is(err, ErrInvalidMetadata) {
						t.Errorf("ParseArrayMetadata(group) error %v", err)
					}
					gm, err = ParseGroupMetadata(doc)
					if err != nil {
						t.Fatal(err)
					}
					out, err := gm.Marshal()
					if err != nil {
						t.Fatal(err)
					}
					if !jsonEqual(t, out, doc) {
						t.Errorf("Marshal:\n%s\nzarr-python:\n%s", out, doc)
					}
					gm2, err := ParseGroupMetadata(out)
					if err != nil || !reflect.DeepEqual(gm, gm2) {
						t.Errorf("round trip: %v", err)
					}
				} else {
					zattrs, _ := os.ReadFile(filepath.Join(dir, ".zattrs"))
					gm, err = ParseGroupMetadataV2(readFile(t, dir, ".zgroup"), zattrs)
					if err != nil {
						t.Fatal(err)
					}
				}
				attrs, _ := json.Marshal(gm.Attributes)
				if !jsonEqual(t, attrs, node.Attributes) {
					t.Errorf("attributes %s, manifest %s", attrs, node.Attributes)
				}
			})
		}
	}
}

func TestChunkKeyEncoding(t *testing.T) {
	cases := []struct {
		json   string
		coords []int
		key    string
	}{
		{`{"name":"default","configuration":{"separator":"/"}}`, []int{1, 0, 12}, "c/1/0/12"},
		{`{"name":"default","configuration":{"separator":"."}}`, []int{1, 0}, "c.1.0"},
		{`{"name":"default"}`, []int{3}, "c/3"},
		{`"default"`, []int{3, 4}, "c/3/4"},
		{`{"name":"default","configuration":{}}`, []int{}, "c"},
		{`{"name":"v2","configuration":{"separator":"."}}`, []int{1, 0}, "1.0"},
		{`{"name":"v2","configuration":{"separator":"/"}}`, []int{1, 0, 7}, "1/0/7"},
		{`{"name":"v2"}`, []int{2, 5}, "2.5"},
		{`"v2"`, []int{}, "0"},
		{`{"name":"v2","must_understand":true}`, []int{9}, "9"},
	}
	for _, c := range cases {
		var e ChunkKeyEncoding
		if err := json.Unmarshal([]byte(c.json), &e); err != nil {
			t.Errorf("%s: %v", c.json, err)
			continue
		}
		if got := e.Key(c.coords); got != c.key {
			t.Errorf("%s Key(%v) = %q, want %q", c.json, c.coords, got, c.key)
		}
		back, ok := e.ParseKey(c.key, len(c.coords))
		if !ok || !reflect.DeepEqual(back, c.coords) {
			t.Errorf("%s ParseKey(%q) = %v, %v", c.json, c.key, back, ok)
		}
		// Marshal writes the explicit form and reads back equal.
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		var e2 ChunkKeyEncoding
		if err := json.Unmarshal(b, &e2); err != nil || e2 != e {
			t.Errorf("round trip %s -> %s -> %+v, %v", c.json, b, e2, err)
		}
	}
	def := DefaultKeyEncoding()
	for _, bad := range []struct {
		key  string
		ndim int
	}{{"c/1", 2}, {"c/1/2", 1}, {"c/01", 1}, {"c/-1", 1}, {"1/2", 2}, {"c.1", 1}, {"c/", 1}, {"c/1/", 2}, {"d", 0}, {"c/+1", 1}} {
		if coords, ok := def.ParseKey(bad.key, bad.ndim); ok {
			t.Errorf("default ParseKey(%q, %d) = %v, want failure", bad.key, bad.ndim, coords)
		}
	}
	if _, ok := V2KeyEncoding("").ParseKey("1.x", 2); ok {
		t.Error("v2 ParseKey(1.x) accepted")
	}
	if got := string(def.AppendKey([]byte("arr/"), []int{4, 2})); got != "arr/c/4/2" {
		t.Errorf("AppendKey = %q", got)
	}
	for _, c := range []struct {
		json string
		err  error
	}{
		{`{"name":"default","configuration":{"separator":"-"}}`, ErrInvalidMetadata},
		{`{"name":"default","configuration":{"separator":""}}`, ErrInvalidMetadata},
		{`{"name":"default","configuration":{"sep":"/"}}`, ErrInvalidMetadata},
		{`{"name":"default","extra":1}`, ErrInvalidMetadata},
		{`{"configuration":{"separator":"/"}}`, ErrInvalidMetadata},
		{`{"name":"fancy"}`, ErrUnsupported},
		{`{"name":"fancy","must_understand":false}`, ErrUnsupported},
		{`"fancy"`, ErrUnsupported},
		{`42`, ErrInvalidMetadata},
		{`{"name":"v2","configuration":[]}`, ErrInvalidMetadata},
	} {
		var e ChunkKeyEncoding
		if err := e.UnmarshalJSON([]byte(c.json)); !errors.Is(err, c.err) {
			t.Errorf("UnmarshalJSON(%s) error %v, want %v", c.json, err, c.err)
		}
	}
}

func BenchmarkChunkKey(b *testing.B) {
	e := DefaultKeyEncoding()
	coords := []int{12, 345, 6}
	buf := make([]byte, 0, 64)
	b.ReportAllocs()
	b.SetBytes(int64(len(e.Key(coords))))
	for b.Loop() {
		buf = e.AppendKey(buf[:0], coords)
	}
}

// validArray is the base document the malformed-metadata table edits.
const validArray = `{
  "zarr_format": 3, "node_type": "array", "shape": [10, 20], "data_type": "int16",
  "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [5, 5]}},
  "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
  "fill_value": 0, "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
  "attributes": {"big": 18446744073709551615}
}`

// edit returns validArray with top-level fields set: kv holds field, value
// pairs (value raw JSON, or "" to remove the field).
func edit(t testing.TB, kv ...string) string {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(validArray), &m); err != nil {
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
		t.Fatalf("%v: %v", kv, err)
	}
	return string(b)
}

func TestParseArrayMetadataValid(t *testing.T) {
	m, err := ParseArrayMetadata([]byte(validArray))
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Attributes["big"]; got != json.Number("18446744073709551615") {
		t.Errorf("large attribute = %#v", got)
	}
	if !reflect.DeepEqual(m.GridShape(), []int{2, 4}) {
		t.Errorf("GridShape = %v", m.GridShape())
	}
	r := m.ChunkRepr()
	if !reflect.DeepEqual(r.Shape, []int{5, 5}) || r.DType != dtype.TypeInt16 || !bytes.Equal(r.Fill, []byte{0, 0}) {
		t.Errorf("ChunkRepr = %+v", r)
	}
	out, _ := m.Marshal()
	if !strings.Contains(string(out), "18446744073709551615") {
		t.Errorf("large attribute lost:\n%s", out)
	}

	accepted := []struct {
		name, field, value string
		check              func(*ArrayMetadata) bool
	}{
		{"extension must_understand false", "my_ext", `{"must_understand": false, "x": [1]}`,
			func(m *ArrayMetadata) bool {
				return string(m.Extensions["my_ext"]) == `{"must_understand":false,"x":[1]}`
			}},
		{"consolidated metadata", ConsolidatedMetadataKey, `null`, func(m *ArrayMetadata) bool { return m.Extensions != nil }},
		{"data type object", "data_type", `{"name": "int16"}`, func(m *ArrayMetadata) bool { return m.DataType == dtype.TypeInt16 }},
		{"data type must_understand", "data_type", `{"name": "int16", "must_understand": true}`, func(m *ArrayMetadata) bool { return m.DataType == dtype.TypeInt16 }},
		{"raw bits", "data_type", `"r16"`, func(m *ArrayMetadata) bool { return m.DataType.Kind() == dtype.Raw }},
		{"zarr-python raw_bytes", "data_type", `{"name": "raw_bytes", "configuration": {"length_bytes": 2}}`,
			func(m *ArrayMetadata) bool { return m.DataType.Name() == "r16" }},
		{"empty storage transformers", "storage_transformers", `[]`, func(m *ArrayMetadata) bool { return true }},
		{"null dimension names", "dimension_names", `null`, func(m *ArrayMetadata) bool { return m.DimensionNames == nil }},
		{"dimension names", "dimension_names", `["y", null]`,
			func(m *ArrayMetadata) bool { return *m.DimensionNames[0] == "y" && m.DimensionNames[1] == nil }},
		{"no attributes", "attributes", "", func(m *ArrayMetadata) bool { return m.Attributes != nil && len(m.Attributes) == 0 }},
		{"codec shorthand", "codecs", `["bytes"]`, func(m *ArrayMetadata) bool { return m.Codecs[0].Name == "bytes" }},
		{"hex fill", "data_type", `"float16"`, func(m *ArrayMetadata) bool { return bytes.Equal(m.FillValue, []byte{1, 0}) }},
		{"zero-length dimension", "shape", `[0, 20]`, func(m *ArrayMetadata) bool { return m.GridShape()[0] == 0 }},
	}
	for _, c := range accepted {
		doc := edit(t, c.field, c.value)
		switch c.name {
		case "raw bits":
			doc = edit(t, c.field, c.value, "fill_value", `[1, 2]`)
		case "zarr-python raw_bytes":
			doc = edit(t, c.field, c.value, "fill_value", `"AAE="`)
		case "hex fill":
			doc = edit(t, "data_type", `"float16"`, "fill_value", `"0x0001"`)
		}
		m, err := ParseArrayMetadata([]byte(doc))
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if !c.check(m) {
			t.Errorf("%s: unexpected result %+v", c.name, m)
		}
		out, err := m.Marshal()
		if err != nil {
			t.Errorf("%s: Marshal: %v", c.name, err)
			continue
		}
		m2, err := ParseArrayMetadata(out)
		if err != nil {
			t.Errorf("%s: re-parse: %v\n%s", c.name, err, out)
		} else if !reflect.DeepEqual(m.Shape, m2.Shape) || !bytes.Equal(m.FillValue, m2.FillValue) ||
			!reflect.DeepEqual(m.Extensions, m2.Extensions) || m.DataType != m2.DataType {
			t.Errorf("%s: round trip differs:\n%+v\n%+v", c.name, m, m2)
		}
	}
}

func TestParseArrayMetadataErrors(t *testing.T) {
	type tc struct {
		name string
		doc  string
		want error
	}
	cases := []tc{
		{"empty", ``, ErrInvalidMetadata},
		{"truncated JSON", validArray[:len(validArray)/2], ErrInvalidMetadata},
		{"not an object", `[1, 2]`, ErrInvalidMetadata},
		{"null document", `null`, ErrInvalidMetadata},
		{"trailing garbage", validArray + `x`, ErrInvalidMetadata},
		{"zarr_format 2", edit(t, "zarr_format", `2`), ErrInvalidMetadata},
		{"zarr_format string", edit(t, "zarr_format", `"3"`), ErrInvalidMetadata},
		{"zarr_format 3.0", edit(t, "zarr_format", `3.0`), ErrInvalidMetadata},
		{"zarr_format missing", edit(t, "zarr_format", ``), ErrInvalidMetadata},
		{"node_type group", edit(t, "node_type", `"group"`), ErrInvalidMetadata},
		{"node_type unknown", edit(t, "node_type", `"table"`), ErrInvalidMetadata},
		{"node_type missing", edit(t, "node_type", ``), ErrInvalidMetadata},
		{"shape missing", edit(t, "shape", ``), ErrInvalidMetadata},
		{"shape not array", edit(t, "shape", `10`), ErrInvalidMetadata},
		{"negative shape", edit(t, "shape", `[-1, 20]`), ErrInvalidMetadata},
		{"fractional shape", edit(t, "shape", `[10.5, 20]`), ErrInvalidMetadata},
		{"string shape", edit(t, "shape", `["10", 20]`), ErrInvalidMetadata},
		{"shape overflows int64", edit(t, "shape", `[9223372036854775808, 1]`), ErrInvalidMetadata},
		{"absurd element count", edit(t, "shape", `[4611686018427387904, 4]`), ErrInvalidMetadata},
		{"too many dimensions", strings.Replace(strings.Replace(validArray, `[10, 20]`, `[`+strings.Repeat(`1,`, 32)+`1]`, 1),
			`[5, 5]`, `[`+strings.Repeat(`1,`, 32)+`1]`, 1), ErrInvalidMetadata},
		{"zero chunk", edit(t, "chunk_grid", `{"name": "regular", "configuration": {"chunk_shape": [0, 5]}}`), ErrInvalidMetadata},
		{"negative chunk", edit(t, "chunk_grid", `{"name": "regular", "configuration": {"chunk_shape": [-5, 5]}}`), ErrInvalidMetadata},
		{"chunk rank mismatch", edit(t, "chunk_grid", `{"name": "regular", "configuration": {"chunk_shape": [5]}}`), ErrInvalidMetadata},
		{"absurd chunk", edit(t, "chunk_grid", `{"name": "regular", "configuration": {"chunk_shape": [1048576, 1048576]}}`), ErrInvalidMetadata},
		{"chunk bytes overflow", edit(t, "chunk_grid", `{"name": "regular", "configuration": {"chunk_shape": [4294967296, 4294967296]}}`), ErrInvalidMetadata},
		{"chunk grid missing", edit(t, "chunk_grid", ``), ErrInvalidMetadata},
		{"chunk grid no configuration", edit(t, "chunk_grid", `{"name": "regular"}`), ErrInvalidMetadata},
		{"chunk grid shorthand", edit(t, "chunk_grid", `"regular"`), ErrInvalidMetadata},
		{"chunk grid unknown member", edit(t, "chunk_grid", `{"name": "regular", "configuration": {"chunk_shape": [5, 5]}, "x": 1}`), ErrInvalidMetadata},
		{"chunk grid unknown config", edit(t, "chunk_grid", `{"name": "regular", "configuration": {"chunk_shape": [5, 5], "x": 1}}`), ErrInvalidMetadata},
		{"unknown chunk grid", edit(t, "chunk_grid", `{"name": "hexagonal", "configuration": {"chunk_shapes": [[5], [5]]}}`), ErrUnsupported},
		{"unknown chunk grid must_understand false", edit(t, "chunk_grid", `{"name": "hexagonal", "must_understand": false}`), ErrUnsupported},
		{"unknown data type", edit(t, "data_type", `"struct"`), ErrUnsupported},
		{"unknown data type object", edit(t, "data_type", `{"name": "datetime", "configuration": {"unit": "ns"}}`), ErrUnsupported},
		{"data type number", edit(t, "data_type", `16`), ErrInvalidMetadata},
		{"data type bad configuration", edit(t, "data_type", `{"name": "int16", "configuration": {"x": 1}}`), ErrInvalidMetadata},
		{"raw_bytes zero length", edit(t, "data_type", `{"name": "raw_bytes", "configuration": {"length_bytes": 0}}`), ErrInvalidMetadata},
		{"r7", edit(t, "data_type", `"r7"`), ErrUnsupported},
		{"unknown key encoding", edit(t, "chunk_key_encoding", `{"name": "hashed"}`), ErrUnsupported},
		{"bad separator", edit(t, "chunk_key_encoding", `{"name": "default", "configuration": {"separator": "_"}}`), ErrInvalidMetadata},
		{"fill missing", edit(t, "fill_value", ``), ErrInvalidMetadata},
		{"fill null", edit(t, "fill_value", `null`), ErrInvalidMetadata},
		{"fill wrong type", edit(t, "fill_value", `"zero"`), ErrInvalidMetadata},
		{"fill out of range", edit(t, "fill_value", `32768`), ErrInvalidMetadata},
		{"fill fraction for int", edit(t, "fill_value", `1.5`), ErrInvalidMetadata},
		{"fill bool for int", edit(t, "fill_value", `true`), ErrInvalidMetadata},
		{"fill bad hex length", edit(t, "fill_value", `"0x001"`), ErrInvalidMetadata},
		{"codecs missing", edit(t, "codecs", ``), ErrInvalidMetadata},
		{"codecs empty", edit(t, "codecs", `[]`), ErrInvalidMetadata},
		{"codecs not array", edit(t, "codecs", `{"name": "bytes"}`), ErrInvalidMetadata},
		{"codec without name", edit(t, "codecs", `[{"configuration": {}}]`), ErrInvalidMetadata},
		{"codec unknown member", edit(t, "codecs", `[{"name": "bytes", "level": 1}]`), ErrInvalidMetadata},
		{"codec configuration not object", edit(t, "codecs", `[{"name": "bytes", "configuration": 5}]`), ErrInvalidMetadata},
		{"attributes not object", edit(t, "attributes", `[1]`), ErrInvalidMetadata},
		{"storage transformer", edit(t, "storage_transformers", `[{"name": "chunk-manifest-json", "configuration": {}}]`), ErrUnsupported},
		{"storage transformers not array", edit(t, "storage_transformers", `{}`), ErrInvalidMetadata},
		{"dimension names wrong length", edit(t, "dimension_names", `["x"]`), ErrInvalidMetadata},
		{"dimension names not strings", edit(t, "dimension_names", `[1, 2]`), ErrInvalidMetadata},
		{"unknown field", edit(t, "chunk_memory_layout", `"C"`), ErrUnsupported},
		{"unknown object field", edit(t, "my_ext", `{"x": 1}`), ErrUnsupported},
		{"unknown field must_understand true", edit(t, "my_ext", `{"must_understand": true}`), ErrUnsupported},
		{"unknown field must_understand string", edit(t, "my_ext", `{"must_understand": "false"}`), ErrUnsupported},
	}
	if len(cases) < 30 {
		t.Fatalf("only %d cases", len(cases))
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := ParseArrayMetadata([]byte(c.doc))
			if !errors.Is(err, c.want) {
				t.Fatalf("ParseArrayMetadata = %+v, %v; want %v", m, err, c.want)
			}
			if m != nil {
				t.Errorf("metadata returned with an error")
			}
		})
	}
	// Fill value errors also wrap dtype.ErrInvalidFill; codec errors
	// codecs.ErrInvalidConfig; messages name the field.
	_, err := ParseArrayMetadata([]byte(edit(t, "fill_value", `32768`)))
	if !errors.Is(err, dtype.ErrInvalidFill) || !strings.Contains(err.Error(), "fill_value") {
		t.Errorf("fill error %v", err)
	}
	_, err = ParseArrayMetadata([]byte(edit(t, "codecs", `[{"name": "bytes", "level": 1}]`)))
	if !errors.Is(err, codecs.ErrInvalidConfig) {
		t.Errorf("codec error %v", err)
	}
	_, err = ParseArrayMetadata([]byte(edit(t, "chunk_memory_layout", `"C"`)))
	if err == nil || !strings.Contains(err.Error(), "chunk_memory_layout") {
		t.Errorf("unknown field error %v does not name the field", err)
	}
	_, err = ParseArrayMetadata([]byte(edit(t, "chunk_grid", `{"name": "rectilinear"}`)))
	if err == nil || !strings.Contains(err.Error(), "rectilinear") {
		t.Errorf("chunk grid error %v does not name the grid", err)
	}
}

func TestValidateAndMarshalErrors(t *testing.T) {
	base := func() *ArrayMetadata {
		m, err := ParseArrayMetadata([]byte(validArray))
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	for _, c := range []struct {
		name   string
		mutate func(*ArrayMetadata)
	}{
		{"nil fill", func(m *ArrayMetadata) { m.FillValue = nil }},
		{"no codecs", func(m *ArrayMetadata) { m.Codecs = nil }},
		{"zero key encoding", func(m *ArrayMetadata) { m.ChunkKeyEncoding = ChunkKeyEncoding{} }},
		{"no data type", func(m *ArrayMetadata) { m.DataType = dtype.DataType{} }},
		{"bad extension", func(m *ArrayMetadata) { m.Extensions = map[string]json.RawMessage{"x": json.RawMessage(`1`)} }},
		{"extension shadows field", func(m *ArrayMetadata) {
			m.Extensions = map[string]json.RawMessage{"shape": json.RawMessage(`{"must_understand":false}`)}
		}},
		{"bad codec configuration", func(m *ArrayMetadata) { m.Codecs[0].Configuration = json.RawMessage(`{`) }},
		{"unmarshalable attribute", func(m *ArrayMetadata) { m.Attributes["f"] = func() {} }},
	} {
		m := base()
		c.mutate(m)
		if _, err := m.Marshal(); !errors.Is(err, ErrInvalidMetadata) && !errors.Is(err, ErrUnsupported) {
			t.Errorf("%s: Marshal error %v", c.name, err)
		}
	}
	var nilMeta *ArrayMetadata
	if err := nilMeta.Validate(); !errors.Is(err, ErrInvalidMetadata) {
		t.Errorf("nil Validate: %v", err)
	}
}

func TestGroupMetadataErrors(t *testing.T) {
	for _, c := range []struct {
		doc  string
		want error
	}{
		{`{"zarr_format": 3, "node_type": "array"}`, ErrInvalidMetadata},
		{`{"zarr_format": 2, "node_type": "group"}`, ErrInvalidMetadata},
		{`{"node_type": "group"}`, ErrInvalidMetadata},
		{`{"zarr_format": 3, "node_type": "group", "attributes": 5}`, ErrInvalidMetadata},
		{`{"zarr_format": 3, "node_type": "group", "extra": 1}`, ErrUnsupported},
		{`{"zarr_format": 3, "node_type": "group"`, ErrInvalidMetadata},
	} {
		if _, err := ParseGroupMetadata([]byte(c.doc)); !errors.Is(err, c.want) {
			t.Errorf("ParseGroupMetadata(%s) error %v, want %v", c.doc, err, c.want)
		}
	}
	g, err := ParseGroupMetadata([]byte(`{"zarr_format": 3, "node_type": "group",
		"consolidated_metadata": {"kind": "inline", "must_understand": false, "metadata": {}}}`))
	if err != nil || g.Extensions[ConsolidatedMetadataKey] == nil || len(g.Attributes) != 0 {
		t.Fatalf("consolidated group: %+v, %v", g, err)
	}
	out, err := g.Marshal()
	if err != nil || !strings.Contains(string(out), `"kind": "inline"`) {
		t.Errorf("Marshal kept no extension: %s, %v", out, err)
	}
}

package zarr_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/gozarr/gozarr/internal/pyjson"
	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/fs"
	"github.com/gozarr/gozarr/store/mem"
	"github.com/gozarr/gozarr/zarr"
)

// objectsDir holds object arrays and numcodecs' own object-codec fixtures
// (testdata/objects/make_objects.py, numcodecs 0.17 in the chroot).
const objectsDir = "../testdata/objects"

// expectedObjects reads NAME.json: shape and values in C order, decoded as
// Python wrote them (ints as int64, floats as float64), with the script's
// markers for NaN, bytes and NumPy arrays turned into Go values.
func expectedObjects(t *testing.T, path string) ([]int, []any) {
	shape, _, vals := expectedObjectsOrder(t, path)
	return shape, vals
}

// expectedObjectsOrder is expectedObjects with the chunk order the
// encoding has ("C", or "F" where numcodecs encoded an F-ordered array
// flat).
func expectedObjectsOrder(t *testing.T, path string) ([]int, string, []any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	v, err := pyjson.Decode(b, pyjson.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	m := v.(map[string]any)
	var shape []int
	for _, d := range m["shape"].([]any) {
		shape = append(shape, int(d.(int64)))
	}
	vals := m["values"].([]any)
	for i := range vals {
		vals[i] = unmark(vals[i])
	}
	order, _ := m["order"].(string)
	if order == "" {
		order = "C"
	}
	return shape, order, vals
}

func unmark(v any) any {
	switch x := v.(type) {
	case map[string]any:
		if f, ok := x["float"].(string); ok && len(x) == 1 {
			switch f {
			case "nan":
				return math.NaN()
			case "inf":
				return math.Inf(1)
			}
			return math.Inf(-1)
		}
		if s, ok := x["bytes"].(string); ok && len(x) == 1 {
			b, _ := base64.StdEncoding.DecodeString(s)
			return b
		}
		if _, ok := x["array"].(string); ok && len(x) == 2 {
			return unmark(x["values"])
		}
		out := map[string]any{}
		for k, e := range x {
			out[k] = unmark(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = unmark(e)
		}
		return out
	}
	return v
}

// sameValue compares values with NaN equal to NaN.
func sameValue(a, b any) bool {
	if fa, ok := a.(float64); ok {
		fb, ok := b.(float64)
		return ok && (fa == fb && math.Signbit(fa) == math.Signbit(fb) || math.IsNaN(fa) && math.IsNaN(fb))
	}
	switch x := a.(type) {
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !sameValue(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k := range x {
			if !sameValue(x[k], y[k]) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(a, b)
}

// readAny reads every element of a as the object API gives it: objects,
// strings (categorize), or ragged arrays as []any of their numbers.
func readAny(t *testing.T, a *zarr.Array, codec string) ([]any, []int) {
	t.Helper()
	ctx := context.Background()
	switch codec {
	case "categorize":
		s, shape, err := zarr.ReadStrings(ctx, a)
		if err != nil {
			t.Fatal(err)
		}
		out := make([]any, len(s))
		for i := range s {
			out[i] = s[i]
		}
		return out, shape
	case "vlen-array":
		var out []any
		var shape []int
		add := func(n int, get func(i, j int) any, lens func(i int) int) {
			for i := range n {
				row := make([]any, lens(i))
				for j := range row {
					row[j] = get(i, j)
				}
				out = append(out, row)
			}
		}
		var cfg struct {
			DType string `json:"dtype"`
		}
		_ = json.Unmarshal(a.Metadata().Codecs[0].Configuration, &cfg)
		if len(a.Metadata().Codecs) > 1 && a.Metadata().Codecs[0].Name == "transpose" {
			_ = json.Unmarshal(a.Metadata().Codecs[1].Configuration, &cfg)
		}
		switch cfg.DType[1:] {
		case "i1":
			shape = ragged[int8](t, a, add)
		case "i2":
			shape = ragged[int16](t, a, add)
		case "i4":
			shape = ragged[int32](t, a, add)
		case "i8":
			shape = ragged[int64](t, a, add)
		case "u1":
			shape = ragged[uint8](t, a, add)
		case "u2":
			shape = ragged[uint16](t, a, add)
		case "u4":
			shape = ragged[uint32](t, a, add)
		case "f4":
			shape = ragged[float32](t, a, add)
		case "f8":
			shape = ragged[float64](t, a, add)
		default:
			t.Fatalf("no Go type for vlen-array %s", cfg.DType)
		}
		return out, shape
	}
	v, shape, err := zarr.ReadObjects(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	return v, shape
}

// ragged reads a ragged array of T, its numbers as int64 or float64.
func ragged[T int8 | int16 | int32 | int64 | uint8 | uint16 | uint32 | float32 | float64](t *testing.T, a *zarr.Array,
	add func(n int, get func(i, j int) any, lens func(i int) int)) []int {
	v, shape, err := zarr.ReadRagged[T](context.Background(), a)
	if err != nil {
		t.Fatal(err)
	}
	add(len(v), func(i, j int) any {
		switch x := any(v[i][j]).(type) {
		case float32:
			return float64(x)
		case float64:
			return x
		}
		return reflect.ValueOf(v[i][j]).Convert(reflect.TypeFor[int64]()).Interface()
	}, func(i int) int { return len(v[i]) })
	return shape
}

func codecOf(name string) string {
	for _, c := range []string{"json2", "msgpack2", "vlen-array", "vlen_array", "categorize"} {
		if strings.HasPrefix(name, c) {
			return strings.Replace(c, "_", "-", 1)
		}
	}
	return ""
}

// TestObjectArrays reads the v2 object arrays laid out as zarr-python 2
// wrote them (json2, msgpack2, vlen-array, categorize over objects; some
// chunks never written, which read as None, empty, or "") and compares
// every element with what numcodecs encoded.
func TestObjectArrays(t *testing.T) {
	ctx := context.Background()
	st, err := fs.New(objectsDir, fs.ReadOnly())
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	ents, _ := os.ReadDir(objectsDir)
	for _, e := range ents {
		name, ok := strings.CutSuffix(e.Name(), ".zarr")
		if !ok {
			continue
		}
		n++
		t.Run(name, func(t *testing.T) {
			a, err := zarr.OpenArray(ctx, st, e.Name())
			if err != nil {
				t.Fatal(err)
			}
			wantShape, want := expectedObjects(t, filepath.Join(objectsDir, name+".json"))
			got, shape := readAny(t, a, codecOf(name))
			if !reflect.DeepEqual(shape, wantShape) || len(got) != len(want) {
				t.Fatalf("shape %v (%d values), want %v (%d)", shape, len(got), wantShape, len(want))
			}
			for i := range want {
				w := want[i]
				if w == nil && codecOf(name) == "vlen-array" {
					w = []any{} // a chunk never written: empty arrays
				}
				if w == nil && codecOf(name) == "categorize" {
					w = ""
				}
				if !sameValue(got[i], w) {
					t.Errorf("[%d] = %#v, want %#v", i, got[i], w)
				}
			}
		})
	}
	if n < 5 {
		t.Fatalf("%d arrays", n)
	}
}

// TestNumcodecsObjectFixtures decodes numcodecs' own fixtures of the
// object codecs (every configuration, the arrays small enough to keep)
// through gozarr, as one-chunk v2 arrays, and, where gozarr's encoder
// writes numcodecs' default settings, encodes the values back to the same
// bytes.
func TestNumcodecsObjectFixtures(t *testing.T) {
	ctx := context.Background()
	root := filepath.Join(objectsDir, "numcodecs")
	codecDirs, _ := filepath.Glob(filepath.Join(root, "*", "codec.*"))
	if len(codecDirs) < 6 {
		t.Fatalf("%d codec dirs", len(codecDirs))
	}
	cases := 0
	for _, cdir := range codecDirs {
		cfgBytes, err := os.ReadFile(filepath.Join(cdir, "config.json"))
		if err != nil {
			t.Fatal(err)
		}
		encs, _ := filepath.Glob(filepath.Join(cdir, "encoded.*.dat"))
		for _, enc := range encs {
			num := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(enc), "encoded."), ".dat")
			codec := filepath.Base(filepath.Dir(cdir))
			label := codec + "/" + filepath.Base(cdir) + "/" + num
			cases++
			t.Run(label, func(t *testing.T) {
				shape, order, want := expectedObjectsOrder(t, filepath.Join(filepath.Dir(cdir), "array."+num+".json"))
				data, _ := os.ReadFile(enc)
				meta := fmt.Sprintf(`{"zarr_format": 2, "shape": %s, "chunks": %s, "dtype": "|O", "fill_value": null,
				  "order": %q, "compressor": null, "filters": [%s], "dimension_separator": "."}`,
					jsonOf(shape), jsonOf(shape), order, cfgBytes)
				st := mem.New()
				key := "0"
				for range len(shape) - 1 {
					key += ".0"
				}
				if err := st.Set(ctx, ".zarray", []byte(meta)); err != nil {
					t.Fatal(err)
				}
				if err := st.Set(ctx, key, data); err != nil {
					t.Fatal(err)
				}
				a, err := zarr.OpenArray(ctx, st, "")
				if err != nil {
					t.Fatal(err)
				}
				got, gotShape := readAny(t, a, strings.Split(codec, "_")[0])
				if !reflect.DeepEqual(gotShape, shape) {
					t.Fatalf("shape %v, want %v", gotShape, shape)
				}
				for i := range want {
					if !sameValue(got[i], want[i]) {
						t.Fatalf("[%d] = %#v, want %#v", i, got[i], want[i])
					}
				}
				// Write the values back with the same metadata: the chunk
				// must be numcodecs' bytes where its settings are the
				// defaults gozarr writes (compact JSON, sorted keys).
				if strings.HasPrefix(codec, "json2") && !bytes.Contains(cfgBytes, []byte(`"indent": null`)) {
					return
				}
				st2 := mem.New()
				_ = st2.Set(ctx, ".zarray", []byte(meta))
				b, err := zarr.OpenArray(ctx, st2, "")
				if err != nil {
					t.Fatal(err)
				}
				switch {
				case codec == "categorize_O":
					s := make([]string, len(got))
					for i := range got {
						s[i] = got[i].(string)
					}
					err = zarr.WriteStrings(ctx, b, s)
				case codec == "vlen-array":
					return // ReadRagged/WriteRagged round trip: TestRaggedWrite
				default:
					err = zarr.WriteObjects(ctx, b, got)
				}
				if err != nil {
					t.Fatal(err)
				}
				mine, err := st2.Get(ctx, key, store.Full())
				if err != nil || !bytes.Equal(mine, data) {
					t.Fatalf("re-encoded chunk differs from numcodecs' (%v):\n%.300s\nnumcodecs:\n%.300s", err, mine, data)
				}
			})
		}
	}
	if cases < 15 {
		t.Fatalf("%d cases", cases)
	}
}

func jsonOf(v any) string { b, _ := json.Marshal(v); return string(b) }

// TestRaggedWrite writes ragged arrays (a partial chunk, another type,
// big-endian elements) and reads them back.
func TestRaggedWrite(t *testing.T) {
	ctx := context.Background()
	for _, dt := range []string{"<i4", ">i4"} {
		st := mem.New()
		meta := `{"zarr_format": 2, "shape": [5], "chunks": [2], "dtype": "|O", "fill_value": null, "order": "C",
		  "compressor": {"id": "zlib", "level": 1}, "filters": [{"id": "vlen-array", "dtype": "` + dt + `"}]}`
		_ = st.Set(ctx, ".zarray", []byte(meta))
		a, err := zarr.OpenArray(ctx, st, "")
		if err != nil {
			t.Fatal(err)
		}
		in := [][]int32{{1, 2, 3}, {}, {-4}}
		if err := zarr.WriteRagged(ctx, a, in, nd.Range(1, 4)); err != nil {
			t.Fatal(err)
		}
		got, _, err := zarr.ReadRagged[int32](ctx, a)
		if err != nil {
			t.Fatal(err)
		}
		want := [][]int32{{}, {1, 2, 3}, {}, {-4}, {}}
		for i := range want {
			if !reflect.DeepEqual(append([]int32{}, got[i]...), want[i]) {
				t.Fatalf("%s: got %v, want %v", dt, got, want)
			}
		}
		if _, _, err := zarr.ReadRagged[int64](ctx, a); !errors.Is(err, zarr.ErrTypeMismatch) {
			t.Errorf("ReadRagged[int64] of %s: %v", dt, err)
		}
		objs, _, err := zarr.ReadObjects(ctx, a)
		if err != nil || !sameValue(objs[1], []any{int64(1), int64(2), int64(3)}) || !sameValue(objs[2], []any{}) {
			t.Errorf("ReadObjects of a ragged array: %#v, %v", objs, err)
		}
		if err := zarr.WriteObjects(ctx, a, []any{[]any{int64(7), 8.0}}, nd.Range(0, 1)); err != nil {
			t.Fatal(err)
		}
		if got, _, _ := zarr.ReadRagged[int32](ctx, a, nd.Range(0, 1)); len(got) != 1 || !reflect.DeepEqual(got[0], []int32{7, 8}) {
			t.Errorf("WriteObjects into a ragged array: %v", got)
		}
		if err := zarr.WriteObjects(ctx, a, []any{[]any{1.5}}, nd.Range(0, 1)); !errors.Is(err, zarr.ErrInvalidValue) {
			t.Errorf("1.5 into int32s: %v", err)
		}
		if _, _, err := zarr.ReadStrings(ctx, a); !errors.Is(err, zarr.ErrTypeMismatch) {
			t.Errorf("ReadStrings of a ragged array: %v", err)
		}
	}
}

// TestObjectHostile: corrupt documents and refused codecs give clear
// errors.
func TestObjectHostile(t *testing.T) {
	ctx := context.Background()
	open := func(filter string, chunk []byte) (*zarr.Array, error) {
		st := mem.New()
		meta := `{"zarr_format": 2, "shape": [2], "chunks": [2], "dtype": "|O", "fill_value": null, "order": "C",
		  "compressor": null, "filters": [` + filter + `]}`
		_ = st.Set(ctx, ".zarray", []byte(meta))
		if chunk != nil {
			_ = st.Set(ctx, "0", chunk)
		}
		return zarr.OpenArray(ctx, st, "")
	}
	if _, err := open(`{"id": "pickle"}`, nil); !errors.Is(err, zarr.ErrUnsupported) || !strings.Contains(err.Error(), "pickle") {
		t.Errorf("pickle: %v", err)
	}
	for _, chunk := range []string{`[1,2,"|O",[3]]`, `[1,2,"<i4",[2]]`, `[1,2`, `[1,NaN,"|O",[2],5`, `{"a":1}`, `[[1,2],"|O",[2]]`,
		`[1,2,"|O",[1099511627776]]`} {
		a, err := open(`{"id": "json2"}`, []byte(chunk))
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := zarr.ReadObjects(ctx, a); err == nil {
			t.Errorf("json2 chunk %s accepted", chunk)
		}
	}
	for _, chunk := range [][]byte{{0x94, 1, 2, 0xa2, '|', 'O', 0x91, 3}, {0xdd, 0xff, 0xff, 0xff, 0xff}, {0x92, 1}} {
		a, err := open(`{"id": "msgpack2"}`, chunk)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := zarr.ReadObjects(ctx, a); err == nil {
			t.Errorf("msgpack2 chunk %x accepted", chunk)
		}
	}
	a, err := open(`{"id": "vlen-array", "dtype": "<i4"}`, []byte{2, 0, 0, 0, 3, 0, 0, 0, 1, 2, 3, 0, 0, 0, 0})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := zarr.ReadRagged[int32](ctx, a); err == nil {
		t.Error("vlen-array element of 3 bytes accepted as int32s")
	}
}

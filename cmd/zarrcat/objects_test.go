package main

import (
	"encoding/base64"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/gozarr/gozarr/internal/pyjson"
)

// TestGetObjects prints every object array of testdata/objects (json2,
// msgpack2, vlen-array, categorize over objects) as JSON and compares it
// with the values numcodecs encoded (make_objects.py's NAME.json).
func TestGetObjects(t *testing.T) {
	dir := "../../testdata/objects"
	arrays, _ := filepath.Glob(filepath.Join(dir, "*.zarr"))
	if len(arrays) < 5 {
		t.Fatalf("%d arrays", len(arrays))
	}
	for _, p := range arrays {
		name := strings.TrimSuffix(filepath.Base(p), ".zarr")
		b, err := os.ReadFile(filepath.Join(dir, name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		ref, err := pyjson.Decode(b, pyjson.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		want := ref.(map[string]any)["values"].([]any)
		for i, v := range want {
			want[i] = expectedJSON(v, name)
		}
		out := runOK(t, "get", "--format", "json", p)
		got, err := pyjson.Decode([]byte(out), pyjson.Limits{})
		if err != nil {
			t.Fatalf("%s: output is not JSON: %v\n%s", name, err, out)
		}
		flat := flatten(got, len(ref.(map[string]any)["shape"].([]any)))
		if !reflect.DeepEqual(flat, want) {
			t.Errorf("%s:\n got %#v\nwant %#v", name, flat, want)
		}
	}
}

// flatten returns the elements of nested lists depth levels deep.
func flatten(v any, depth int) []any {
	if depth == 0 {
		return []any{v}
	}
	var out []any
	for _, e := range v.([]any) {
		out = append(out, flatten(e, depth-1)...)
	}
	return out
}

// expectedJSON is what --format json prints for a value of NAME.json: NaN
// as null, bytes as b"...", elements never written as the array's empty
// value.
func expectedJSON(v any, array string) any {
	switch x := v.(type) {
	case nil:
		switch {
		case strings.HasPrefix(array, "vlen_array"):
			return []any{}
		case strings.HasPrefix(array, "categorize"):
			return ""
		}
	case map[string]any:
		if f, ok := x["float"]; ok && len(x) == 1 {
			_ = f
			return nil
		}
		if s, ok := x["bytes"].(string); ok && len(x) == 1 {
			raw, _ := base64.StdEncoding.DecodeString(s)
			return "b" + strconv.QuoteToASCII(string(raw))
		}
		if vals, ok := x["values"]; ok && len(x) == 2 {
			return expectedJSON(vals, array)
		}
		out := map[string]any{}
		for k, e := range x {
			out[k] = expectedJSON(e, array)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = expectedJSON(e, array)
		}
		return out
	case float64:
		if math.IsNaN(x) {
			return nil
		}
	}
	return v
}

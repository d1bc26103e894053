package pyjson

import (
	"bytes"
	"errors"
	"math"
	"os"
	"reflect"
	"strings"
	"testing"
)

// dumpsValues are the values testdata/dumps.txt holds, as Python wrote
// them: json.dumps(vals, ensure_ascii=True, allow_nan=True,
// sort_keys=True, separators=(",", ":")), numcodecs' json2 settings.
var dumpsValues = []any{nil, true, int64(1), int64(-7), int64(1000000000000000), 2.5, 1e16, 1.5e-7, 0.1,
	math.Copysign(0, -1), math.NaN(), math.Inf(1), math.Inf(-1), "foo", "¡Hola!\n\"q\"\\", "😀\x01",
	[]any{int64(1), "a", []any{2.0}}, map[string]any{"k": []any{int64(1), int64(2)}, "b": nil, "a": map[string]any{}},
	[]any{}, 123.0, 1e22, 5e-324}

func TestPythonDumps(t *testing.T) {
	want, err := os.ReadFile("testdata/dumps.txt")
	if err != nil {
		t.Fatal(err)
	}
	want = bytes.TrimSpace(want)
	got, err := Append(nil, dumpsValues)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("encode:\n%s\nPython:\n%s (%v)", got, want, err)
	}
	v, err := Decode(want, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	back, _ := Append(nil, v)
	if !bytes.Equal(back, want) {
		t.Fatalf("decode then encode:\n%s", back)
	}
	items, err := SplitArray(want, Limits{})
	if err != nil || len(items) != len(dumpsValues) || string(items[16]) != `[1,"a",[2.0]]` {
		t.Fatalf("split: %q, %v", items, err)
	}
	for i, it := range items {
		one, err := Decode(it, Limits{})
		if err != nil {
			t.Fatal(err)
		}
		if f, ok := one.(float64); ok && math.IsNaN(f) {
			continue
		}
		if !reflect.DeepEqual(one, dumpsValues[i]) {
			t.Errorf("item %d: %#v, want %#v", i, one, dumpsValues[i])
		}
	}
}

func TestHostile(t *testing.T) {
	for _, s := range []string{"", "[", "[1,]", "{\"a\"}", "nul", "01", "1.", "[1] 2", "\"\\x\"", "\"\x01\"",
		"\"\\ud83d\"" + "x", "-", "{1:2}", strings.Repeat("[", 100) + strings.Repeat("]", 100), "\"\xff\""} {
		if _, err := Decode([]byte(s), Limits{}); err == nil && s != "\"\\ud83d\"x" {
			t.Errorf("%q accepted", s)
		} else if err != nil && !errors.Is(err, ErrSyntax) {
			t.Errorf("%q: %v is not ErrSyntax", s, err)
		}
	}
	if _, err := Decode([]byte("["+strings.Repeat("1,", 200)+"1]"), Limits{MaxValues: 100}); !errors.Is(err, ErrSyntax) {
		t.Errorf("201 values with a limit of 100: %v", err)
	}
	if _, err := SplitArray([]byte(`{"a": 1}`), Limits{}); !errors.Is(err, ErrSyntax) {
		t.Errorf("split of an object: %v", err)
	}
}

func FuzzDecode(f *testing.F) {
	f.Add([]byte(`[null,true,1,-7,2.5,1e+16,NaN,-Infinity,"\u00a1",{"a":[]}]`))
	f.Add([]byte(`"\ud83d\ude00"`))
	f.Add([]byte(`[[[[1]]]]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := Decode(b, Limits{MaxValues: 1 << 12})
		if err != nil {
			if !errors.Is(err, ErrSyntax) {
				t.Fatal(err)
			}
			return
		}
		enc, err := Append(nil, v)
		if err != nil {
			t.Fatalf("re-encode %#v: %v", v, err)
		}
		w, err := Decode(enc, Limits{MaxValues: 1 << 12})
		if err != nil {
			t.Fatalf("re-decode %s: %v", enc, err)
		}
		again, _ := Append(nil, w)
		if !bytes.Equal(again, enc) {
			t.Fatalf("not stable: %s then %s", enc, again)
		}
		if _, err := SplitArray(b, Limits{MaxValues: 1 << 12}); err != nil && !errors.Is(err, ErrSyntax) {
			t.Fatal(err)
		}
	})
}

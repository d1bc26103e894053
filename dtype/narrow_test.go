package dtype

import (
	"encoding/json"
	"math"
	"os"
	"testing"
)

// narrowRef is testdata/narrow.json, made by ml_dtypes
// (testdata/make_narrow.py): every bit pattern's value, and what a set of
// float64 inputs rounds to.
type narrowRef struct {
	Inputs []any `json:"inputs"`
	Types  map[string]struct {
		Bits   int   `json:"bits"`
		Decode []any `json:"decode"`
		Encode []int `json:"encode"`
	} `json:"types"`
}

func refFloat(t *testing.T, v any) float64 {
	switch x := v.(type) {
	case float64:
		return x
	case string:
		switch x {
		case "nan":
			return math.NaN()
		case "inf":
			return math.Inf(1)
		case "-inf":
			return math.Inf(-1)
		}
	}
	t.Fatalf("bad reference value %v", v)
	return 0
}

func loadNarrowRef(t *testing.T) narrowRef {
	b, err := os.ReadFile("testdata/narrow.json")
	if err != nil {
		t.Fatal(err)
	}
	var ref narrowRef
	if err := json.Unmarshal(b, &ref); err != nil {
		t.Fatal(err)
	}
	return ref
}

// TestNarrowMatchesMLDtypes checks every bit pattern's value and the
// rounding of several hundred inputs (ties, subnormals, overflow, NaN,
// infinities) against ml_dtypes.
func TestNarrowMatchesMLDtypes(t *testing.T) {
	ref := loadNarrowRef(t)
	if len(ref.Types) != len(narrowFormats) {
		t.Fatalf("reference has %d types, gozarr %d", len(ref.Types), len(narrowFormats))
	}
	for _, d := range NarrowTypes() {
		r, ok := ref.Types[d.Name()]
		if !ok {
			t.Fatalf("%s: not in the reference", d.Name())
		}
		if d.Bits() != r.Bits || len(r.Decode) != 1<<r.Bits {
			t.Fatalf("%s: %d bits, reference %d (%d values)", d, d.Bits(), r.Bits, len(r.Decode))
		}
		for b, want := range r.Decode {
			if d.Kind() != NarrowFloat {
				if got := NarrowToInt64(d, byte(b)); float64(got) != want.(float64) {
					t.Errorf("%s: %#02x is %d, ml_dtypes %v", d, b, got, want)
				}
				enc, err := NarrowFromInt64(d, int64(want.(float64)))
				if err != nil || NarrowToInt64(d, enc) != int64(want.(float64)) {
					t.Errorf("%s: %v encodes to %#02x (%v)", d, want, enc, err)
				}
				continue
			}
			got, w := NarrowToFloat64(d, byte(b)), refFloat(t, want)
			if got != w && !(math.IsNaN(got) && math.IsNaN(w)) || math.Signbit(got) != math.Signbit(w) && !math.IsNaN(w) {
				t.Errorf("%s: %#02x is %v, ml_dtypes %v", d, b, got, w)
			}
			// The high bits are ignored.
			if g2 := NarrowToFloat64(d, byte(b)|^byte(1<<r.Bits-1)); d.Bits() < 8 && g2 != got && !math.IsNaN(got) {
				t.Errorf("%s: high bits change %#02x to %v", d, b, g2)
			}
		}
		if d.Kind() != NarrowFloat {
			continue
		}
		for i, in := range ref.Inputs {
			v := refFloat(t, in)
			if got, want := NarrowFromFloat64(d, v), byte(r.Encode[i]); got != want {
				t.Errorf("%s: %v rounds to %#02x, ml_dtypes %#02x", d, v, got, want)
			}
		}
	}
}

func TestNarrowFill(t *testing.T) {
	for _, tc := range []struct {
		name, fill string
		want       byte
		out        string
	}{
		{"float8_e4m3fn", `1.5`, 0x3c, `1.5`},
		{"float8_e4m3fn", `"NaN"`, 0x7f, `"NaN"`},
		{"float8_e5m2", `"-Infinity"`, 0xfc, `"-Infinity"`},
		{"float8_e5m2", `"0x7d"`, 0x7d, `"0x7d"`},
		{"float4_e2m1fn", `-6`, 0x0f, `-6.0`},
		{"int4", `-8`, 0xf8, `-8`},
		{"uint2", `3`, 0x03, `3`},
	} {
		d, err := Parse(tc.name)
		if err != nil {
			t.Fatal(err)
		}
		b, err := ParseFill(d, json.RawMessage(tc.fill))
		if err != nil || len(b) != 1 || b[0] != tc.want {
			t.Errorf("%s fill %s: %x, %v; want %#02x", tc.name, tc.fill, b, err, tc.want)
			continue
		}
		out, err := FormatFill(d, b)
		if err != nil || string(out) != tc.out {
			t.Errorf("%s fill %#02x formats as %s, %v; want %s", tc.name, b[0], out, err, tc.out)
		}
	}
	for _, tc := range []struct{ name, fill string }{
		{"float4_e2m1fn", `"NaN"`}, {"float8_e4m3fn", `"Infinity"`}, {"int4", `8`}, {"uint4", `-1`},
		{"int2", `1.5`}, {"float4_e2m1fn", `"0x10"`}, {"float8_e8m0fnu", `"-Infinity"`},
	} {
		d, _ := Parse(tc.name)
		if b, err := ParseFill(d, json.RawMessage(tc.fill)); err == nil {
			t.Errorf("%s fill %s accepted as %x", tc.name, tc.fill, b)
		}
	}
}

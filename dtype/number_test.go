package dtype

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"math"
	"os"
	"strconv"
	"testing"
)

// TestNumberMatchesNumPy decodes every element of testdata/numbers.json
// (made by make_numbers.py with NumPy) with NumberOf, checks its exact
// value, and stores it with Put into every real type: the bytes NumPy's
// astype makes where the value fits, ErrDoesNotFit where it does not.
func TestNumberMatchesNumPy(t *testing.T) {
	raw, err := os.ReadFile("testdata/numbers.json")
	if err != nil {
		t.Fatal(err)
	}
	var ref struct {
		Types map[string][]struct {
			Elem  string
			Value string
			To    map[string]*string
		}
	}
	if err := json.Unmarshal(raw, &ref); err != nil {
		t.Fatal(err)
	}
	if len(ref.Types) != 12 {
		t.Fatalf("%d types in numbers.json", len(ref.Types))
	}
	n := 0
	for name, cases := range ref.Types {
		dt, err := Parse(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cases {
			elem, _ := hex.DecodeString(c.Elem)
			v, err := NumberOf(dt, elem)
			if err != nil {
				t.Fatalf("NumberOf(%s, %s): %v", name, c.Elem, err)
			}
			if got := numberText(v, c.Value); got != c.Value {
				t.Errorf("NumberOf(%s, %s) = %s, NumPy %s", name, c.Elem, got, c.Value)
			}
			for toName, want := range c.To {
				to, _ := Parse(toName)
				out := make([]byte, to.Size())
				err := v.Put(to, out)
				n++
				switch {
				case want == nil && !errors.Is(err, ErrDoesNotFit):
					t.Errorf("%s %s -> %s: %x, %v; want ErrDoesNotFit", name, c.Value, toName, out, err)
				case want != nil && (err != nil || hex.EncodeToString(out) != *want):
					t.Errorf("%s %s -> %s: %x, %v; NumPy %s", name, c.Value, toName, out, err, *want)
				}
			}
		}
	}
	t.Logf("%d conversions", n)
}

// numberText is v as make_numbers.py writes it: integers in decimal;
// a float is written back as the value text it equals (parsed, NaN equal
// to NaN, -0 distinct from 0), or in Go's form when it differs.
func numberText(v Number, want string) string {
	if !v.IsFloat() {
		return v.String()
	}
	w, err := strconv.ParseFloat(want, 64)
	f := v.Float64()
	if err == nil && (math.Float64bits(w) == math.Float64bits(f) || math.IsNaN(w) && math.IsNaN(f)) {
		return want
	}
	return v.String()
}

// TestNumberOfOthers: types that are not real numbers, and elements of the
// wrong size, are ErrNotNumber; so is Put into them.
func TestNumberOfOthers(t *testing.T) {
	for _, name := range []string{"complex64", "r16", "string"} {
		dt, err := Parse(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := NumberOf(dt, make([]byte, dt.Size())); !errors.Is(err, ErrNotNumber) {
			t.Errorf("NumberOf(%s): %v, want ErrNotNumber", name, err)
		}
		if err := IntNumber(1).Put(dt, make([]byte, dt.Size())); !errors.Is(err, ErrNotNumber) {
			t.Errorf("Put(%s): %v, want ErrNotNumber", name, err)
		}
	}
	if _, err := NumberOf(TypeInt32, []byte{1, 2}); !errors.Is(err, ErrNotNumber) {
		t.Errorf("NumberOf(int32, 2 bytes): %v", err)
	}
	if err := IntNumber(1).Put(TypeInt32, make([]byte, 8)); !errors.Is(err, ErrNotNumber) {
		t.Errorf("Put(int32, 8 bytes): %v", err)
	}
}

// FuzzNumber decodes arbitrary bytes as every real type and stores the
// Number back: no panic, and integers and booleans 0/1 round-trip exactly.
func FuzzNumber(f *testing.F) {
	f.Add([]byte{0x01, 0x00, 0x00, 0x20, 0x00, 0x00, 0x20, 0x00})
	f.Add([]byte{0xff, 0xff, 0x7f, 0x7f, 0, 0, 0xf8, 0x7f})
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, dt := range []DataType{TypeBool, TypeInt8, TypeInt16, TypeInt32, TypeInt64, TypeUint8, TypeUint16,
			TypeUint32, TypeUint64, TypeFloat16, TypeFloat32, TypeFloat64} {
			if len(b) < dt.Size() {
				continue
			}
			elem := b[:dt.Size()]
			v, err := NumberOf(dt, elem)
			if err != nil {
				t.Fatalf("NumberOf(%s, %x): %v", dt, elem, err)
			}
			out := make([]byte, dt.Size())
			err = v.Put(dt, out)
			if k := dt.Kind(); k == Int || k == Uint || k == Bool && elem[0] <= 1 {
				if err != nil || string(out) != string(elem) {
					t.Errorf("%s %x -> %s -> %x, %v", dt, elem, v, out, err)
				}
			}
		}
	})
}

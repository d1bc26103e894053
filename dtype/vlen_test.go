package dtype

import (
	"bytes"
	"errors"
	"testing"
)

func TestVarLenTypes(t *testing.T) {
	for _, c := range []struct {
		name, codec string
		d           DataType
	}{
		{"string", "vlen-utf8", TypeVarString},
		{"variable_length_bytes", "vlen-bytes", TypeVarBytes},
	} {
		d, err := Parse(c.name)
		if err != nil || d != c.d || d.Name() != c.name || d.String() != c.name || !d.VarLen() || d.Size() != HandleSize {
			t.Errorf("Parse(%q) = %v (%s, %d bytes), %v", c.name, d, d.Name(), d.Size(), err)
		}
		if d.NumpyDescr() != "|O" || d.VarCodec() != c.codec || d.Configuration() != nil || d.SwapUnit() != 1 {
			t.Errorf("%s: descr %s codec %s", c.name, d.NumpyDescr(), d.VarCodec())
		}
		if got, ok := VarLenOf(c.codec); !ok || got != c.d {
			t.Errorf("VarLenOf(%q) = %v", c.codec, got)
		}
	}
	if d, _ := Parse("bytes"); d != TypeVarBytes {
		t.Errorf("zarr-extensions' \"bytes\" is %v", d)
	}
	if TypeInt8.VarLen() || TypeInt8.VarCodec() != "" {
		t.Error("int8 is variable-length")
	}
	if _, _, err := ParseNumpy("string"); err == nil {
		t.Error(`ParseNumpy("string"): no error`)
	}
}

func TestVarFill(t *testing.T) {
	for _, c := range []struct {
		d       DataType
		raw     string
		v2      bool
		content string
		ok      bool
	}{
		{TypeVarString, `""`, false, "", true},
		{TypeVarString, `"N/A é"`, false, "N/A é", true},
		{TypeVarString, `0`, true, "0", true},
		{TypeVarString, `null`, true, "", false},
		{TypeVarBytes, `"AWZpbGw="`, false, "\x01fill", true},
		{TypeVarBytes, `""`, true, "", true},
	} {
		var got []byte
		var ok bool
		var err error
		if c.v2 {
			got, ok, err = ParseFillV2(c.d, []byte(c.raw))
		} else {
			got, err = ParseFill(c.d, []byte(c.raw))
			ok = err == nil
		}
		if err != nil || ok != c.ok || string(got) != c.content {
			t.Errorf("%s %s: %q %v %v, want %q", c.d, c.raw, got, ok, err, c.content)
		}
	}
	for _, c := range []struct {
		d   DataType
		raw string
	}{
		{TypeVarString, `0`}, {TypeVarString, `null`}, {TypeVarBytes, `"!!"`}, {TypeVarBytes, `[1]`},
	} {
		if _, err := ParseFill(c.d, []byte(c.raw)); !errors.Is(err, ErrInvalidFill) {
			t.Errorf("%s %s: %v, want ErrInvalidFill", c.d, c.raw, err)
		}
	}
	if js, err := FormatFill(TypeVarString, []byte("a<\"b\"")); err != nil || string(js) != `"a<\"b\""` {
		t.Errorf("FormatFill: %s %v", js, err)
	}
	if js, err := FormatFill(TypeVarBytes, []byte{1, 'f'}); err != nil || string(js) != `"AWY="` {
		t.Errorf("FormatFill bytes: %s %v", js, err)
	}
	if _, err := FormatFill(TypeVarString, []byte{0xff}); !errors.Is(err, ErrInvalidFill) {
		t.Errorf("FormatFill of invalid UTF-8: %v", err)
	}
}

// FuzzVarFill: a fill value that parses formats back to JSON that parses
// to the same content, in v3 and v2.
func FuzzVarFill(f *testing.F) {
	for _, s := range []string{`""`, `"x"`, `"AWZpbGw="`, `0`, `1.5`, `null`, `"\u00e9\n"`} {
		f.Add([]byte(s), false, false)
		f.Add([]byte(s), true, true)
	}
	f.Fuzz(func(t *testing.T, raw []byte, isBytes, v2 bool) {
		d := TypeVarString
		if isBytes {
			d = TypeVarBytes
		}
		var got []byte
		var err error
		if v2 {
			var ok bool
			if got, ok, err = ParseFillV2(d, raw); err == nil && !ok {
				return
			}
		} else {
			got, err = ParseFill(d, raw)
		}
		if err != nil {
			if !errors.Is(err, ErrInvalidFill) {
				t.Fatalf("error %v does not wrap ErrInvalidFill", err)
			}
			return
		}
		js, err := FormatFill(d, got)
		if err != nil {
			t.Fatalf("FormatFill(%s, %q): %v", d, got, err)
		}
		back, err := ParseFill(d, js)
		if err != nil || !bytes.Equal(back, got) {
			t.Fatalf("round trip %q -> %s -> %q, %v", got, js, back, err)
		}
	})
}

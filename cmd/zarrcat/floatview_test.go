package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gozarr/gozarr/dtype"
)

// TestFloatLayoutAsNumpy formats every case of testdata/printing/floats.json
// (float16, float32, float64, complex64 and complex128 arrays printed by NumPy with its default
// options: positional and scientific, integral values, NaN and infinities,
// values cut at 8 digits, extremes) and wants NumPy's row, character for
// character.
func TestFloatLayoutAsNumpy(t *testing.T) {
	raw, err := os.ReadFile("../../testdata/printing/floats.json")
	if err != nil {
		t.Fatal(err)
	}
	var ref struct {
		Cases []struct{ Dtype, Hex, Row string }
	}
	if err := json.Unmarshal(raw, &ref); err != nil {
		t.Fatal(err)
	}
	if len(ref.Cases) < 111 {
		t.Fatalf("%d cases in floats.json, want the 111 make_printing.py writes", len(ref.Cases))
	}
	types := map[string]dtype.DataType{"float16": dtype.TypeFloat16, "float32": dtype.TypeFloat32, "float64": dtype.TypeFloat64,
		"complex64": dtype.TypeComplex64, "complex128": dtype.TypeComplex128}
	for i, c := range ref.Cases {
		dt := types[c.Dtype]
		b, err := hex.DecodeString(c.Hex)
		if err != nil {
			t.Fatal(err)
		}
		l := newNumpyLayout(dt)
		n := dt.Size()
		for k := 0; k < len(b); k += n {
			l.add(b[k : k+n])
		}
		l.done()
		var parts []string
		for k := 0; k < len(b); k += n {
			s := l.format(b[k : k+n])
			if len(s) != l.width() {
				t.Errorf("case %d: %q is %d wide, the layout says %d", i, s, len(s), l.width())
			}
			parts = append(parts, s)
		}
		if got := strings.Join(parts, " "); got != c.Row {
			t.Errorf("case %d (%s %s):\n got %q\nwant %q (NumPy)", i, c.Dtype, c.Hex, got, c.Row)
		}
	}
}

// TestTextViewFloatsAsNumpy reads selections of the float and complex
// reference arrays with get --threshold 0 and wants each row as
// NumPy prints the same selection of the array's .npy (floats.json's views),
// in memory and streamed.
func TestTextViewFloatsAsNumpy(t *testing.T) {
	raw, err := os.ReadFile("../../testdata/printing/floats.json")
	if err != nil {
		t.Fatal(err)
	}
	var ref struct {
		Views []struct {
			Array, Selection string
			Rows             []string
		}
	}
	if err := json.Unmarshal(raw, &ref); err != nil {
		t.Fatal(err)
	}
	if len(ref.Views) < 7 {
		t.Fatalf("%d views in floats.json, want 7", len(ref.Views))
	}
	old := viewInMemory
	defer func() { viewInMemory = old }()
	for _, streamed := range []bool{false, true} {
		if streamed {
			viewInMemory = 0
		}
		for _, v := range ref.Views {
			var out bytes.Buffer
			args := []string{"get", "--threshold", "0", filepath.Join(refDir, v.Array+".zarr"), v.Selection}
			if err := run(context.Background(), args, &out, io.Discard); err != nil {
				t.Fatalf("%v: %v", args, err)
			}
			lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
			if got := lines[1:]; !slices.Equal(got, v.Rows) {
				t.Errorf("%v (streamed %v):\n got %q\nwant %q (NumPy)", args, streamed, got, v.Rows)
			}
		}
	}
}

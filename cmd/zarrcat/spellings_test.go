package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"testing"

	"github.com/gozarr/gozarr/internal/npy"
)

// TestGetNumpySpellings: zarrcat get gives NumPy's result (shape and
// values, as npy) for every selection text of the generated NumPy
// reference set (testdata/selections/numpy_spellings.json, made by
// make_selections.py), --oindex the orthogonal one, and exits with
// status 2 wherever NumPy raises.
func TestGetNumpySpellings(t *testing.T) {
	b, err := os.ReadFile("../../testdata/selections/numpy_spellings.json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct{ Cases []numpyRefCase }
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	arrays := arangeArrays(t, f.Cases)
	get := func(c numpyRefCase, flags ...string) ([]int, []int, error) {
		var out, errw bytes.Buffer
		args := append(append([]string{"get", "--format", "npy"}, flags...), arrays[fmt.Sprint(c.Shape)], c.Text)
		if err := run(context.Background(), args, &out, &errw); err != nil {
			return nil, nil, err
		}
		got, err := npy.Read(&out)
		if err != nil {
			t.Fatalf("%v [%s]: %v", c.Shape, c.Text, err)
		}
		vals := make([]int, len(got.Data)/8)
		for i := range vals {
			vals[i] = int(int64(binary.LittleEndian.Uint64(got.Data[8*i:])))
		}
		return got.Shape, vals, nil
	}
	errs := 0
	for _, c := range f.Cases {
		shape, vals, err := get(c)
		switch {
		case c.Error != "":
			errs++
			if exitCode(err) != 2 {
				t.Errorf("%v [%s]: %v (exit %d), NumPy raises %s", c.Shape, c.Text, err, exitCode(err), c.Error)
			}
		case err != nil:
			t.Errorf("%v [%s]: %v", c.Shape, c.Text, err)
		case !equalInts(shape, c.ResultShape) || !slices.Equal(vals, c.Values) && len(c.Values) > 0:
			t.Errorf("%v [%s]: shape %v values %v, NumPy %v %v", c.Shape, c.Text, shape, vals, c.ResultShape, c.Values)
		}
		if c.OShape == nil && c.OError == "" {
			continue
		}
		shape, vals, err = get(c, "--oindex")
		switch {
		case c.OError != "":
			if exitCode(err) != 2 {
				t.Errorf("%v oindex[%s]: %v (exit %d), NumPy raises %s", c.Shape, c.Text, err, exitCode(err), c.OError)
			}
		case err != nil:
			t.Errorf("%v oindex[%s]: %v", c.Shape, c.Text, err)
		case !equalInts(shape, c.OShape) || !slices.Equal(vals, c.OValues) && len(c.OValues) > 0:
			t.Errorf("%v oindex[%s]: shape %v values %v, NumPy %v %v", c.Shape, c.Text, shape, vals, c.OShape, c.OValues)
		}
	}
	if len(f.Cases) < 400 || errs < 80 {
		t.Errorf("only %d cases, %d errors", len(f.Cases), errs)
	}
}

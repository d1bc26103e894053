package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gozarr/gozarr/internal/npy"
	"github.com/gozarr/gozarr/nd"
)

// TestGetGathers checks get's orthogonal, coordinate and block selections
// against the reference values: index arrays and masks in the selection,
// --points (text and .npy), --mask, --blocks, in small budgets too (many
// blocks of points).
func TestGetGathers(t *testing.T) {
	ctx := context.Background()
	target := filepath.Join(refDir, "v3_dtype_int16.zarr") // shape [31 19], chunks [6 7]
	want, err := npy.ReadFile(filepath.Join(refDir, "v3_dtype_int16.npy"))
	if err != nil {
		t.Fatal(err)
	}
	at := func(i, j int) []byte { o := (i*19 + j) * 2; return want.Data[o : o+2] }
	points := filepath.Join("..", "..", "testdata", "selections", "zarrcat_points.txt")
	pointsNpy := filepath.Join(t.TempDir(), "points.npy")
	var pb []byte
	for _, v := range []int64{30, 18, 0, -19, 7, 7} {
		for k := range 8 {
			pb = append(pb, byte(uint64(v)>>(8*k)))
		}
	}
	if err := npy.WriteFile(pointsNpy, "<i8", []int{3, 2}, pb); err != nil {
		t.Fatal(err)
	}
	mask := filepath.Join("..", "..", "testdata", "selections", "zarrcat_mask.npy")
	var maskElems [][2]int
	for i := range 31 {
		for j := range 19 {
			if (i*19+j)%37 == 0 {
				maskElems = append(maskElems, [2]int{i, j})
			}
		}
	}
	var blockElems [][2]int
	for i := 30; i < 31; i++ {
		for j := 7; j < 19; j++ {
			blockElems = append(blockElems, [2]int{i, j})
		}
	}
	tests := []struct {
		args  []string
		shape []int
		elems [][2]int
	}{
		{[]string{target, "[[3, -1, 3], ::9]"}, []int{3, 3}, [][2]int{{3, 0}, {3, 9}, {3, 18}, {30, 0}, {30, 9}, {30, 18}, {3, 0}, {3, 9}, {3, 18}}},
		{[]string{target, "[True" + strings.Repeat(", False", 29) + ", True], 4"}, []int{2}, [][2]int{{0, 4}, {30, 4}}},
		{[]string{"--points", points, target}, []int{5}, [][2]int{{0, 0}, {30, 18}, {30, 0}, {5, 7}, {5, 7}}},
		{[]string{"--budget", "4", "--points", points, target}, []int{5}, [][2]int{{0, 0}, {30, 18}, {30, 0}, {5, 7}, {5, 7}}},
		{[]string{"--points", pointsNpy, target}, []int{3}, [][2]int{{30, 18}, {0, 0}, {7, 7}}},
		{[]string{"--mask", mask, target}, []int{len(maskElems)}, maskElems},
		{[]string{"--blocks", target, "-1, 1:"}, []int{1, 12}, blockElems},
	}
	for _, tc := range tests {
		var stdout bytes.Buffer
		if err := run(ctx, append([]string{"get", "--format=npy"}, tc.args...), &stdout, &stdout); err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		got, err := npy.Read(&stdout)
		if err != nil {
			t.Fatal(err)
		}
		if !equalInts(got.Shape, tc.shape) {
			t.Fatalf("%v: shape %v, want %v", tc.args, got.Shape, tc.shape)
		}
		var exp []byte
		for _, e := range tc.elems {
			exp = append(exp, at(e[0], e[1])...)
		}
		if !bytes.Equal(got.Data, exp) {
			t.Errorf("%v: values differ", tc.args)
		}
	}
	bad := filepath.Join(t.TempDir(), "bad.txt")
	os.WriteFile(bad, []byte("1 2 3\n"), 0o644)
	far := filepath.Join(t.TempDir(), "far.txt")
	os.WriteFile(far, []byte("31 0\n"), 0o644)
	errs := []struct {
		args []string
		want error
	}{
		{[]string{"--points", points, "--mask", mask, target}, errUsage},
		{[]string{"--points", points, target, "0"}, errUsage},
		{[]string{"--points", bad, target}, errUsage},
		{[]string{"--points", far, target}, nd.ErrOutOfBounds},
		{[]string{"--mask", mask, filepath.Join(refDir, "v3_dtype_int32.zarr")}, nd.ErrInvalidSelection},
		{[]string{"--blocks", target, "[[0, 1]]"}, nd.ErrInvalidSelection},
		// One Python list, which NumPy makes one array of: it nests
		// unevenly (NumPy's ValueError), no selection of two items.
		{[]string{target, "[[True" + strings.Repeat(", False", 29) + ", True], 4]"}, nd.ErrInvalidSelection},
	}
	for _, tc := range errs {
		var out bytes.Buffer
		if err := run(ctx, append([]string{"get"}, tc.args...), &out, &out); !errors.Is(err, tc.want) {
			t.Errorf("%v: err = %v, want %v", tc.args, err, tc.want)
		}
	}
}

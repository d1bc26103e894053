package refdata

import (
	"errors"
	"os"
	"reflect"
	"testing"
)

func TestManifest(t *testing.T) {
	cases := Cases(t)
	if len(cases) != 162 {
		t.Errorf("%d cases, the corpus README says 162", len(cases))
	}
	if g := Groups(t); len(g) != 2 || g[0].Name != "v3_group" || len(g[0].Nodes) != 7 || g[0].Nodes[4].Case != "v3_group/measurements/temperature" {
		t.Errorf("groups %+v", g)
	}
	formats := map[int]int{}
	for _, c := range cases {
		formats[c.ZarrFormat]++
		meta := "zarr.json"
		if c.ZarrFormat == 2 {
			meta = ".zarray"
		}
		if _, err := os.Stat(c.File(meta)); err != nil {
			t.Errorf("%s: %v", c.Name, err)
		}
		a, err := c.ReadExpected()
		if err != nil {
			t.Errorf("%s: %v", c.Name, err)
		} else if a.NumElements() != product(c.Shape) {
			t.Errorf("%s: %d elements, shape %v", c.Name, a.NumElements(), c.Shape)
		}
	}
	if formats[2] == 0 || formats[3] == 0 || formats[2]+formats[3] != len(cases) {
		t.Errorf("zarr formats %v", formats)
	}
}

func product(s []int) int {
	n := 1
	for _, v := range s {
		n *= v
	}
	return n
}

func TestLookup(t *testing.T) {
	c := Lookup(t, "v3_group/mask")
	if c.Path != "v3_group.zarr/mask" || c.Expected != "v3_group__mask.npy" || c.Group != "v3_group" {
		t.Errorf("v3_group/mask: %+v", c)
	}
	if s := Lookup(t, "v3_dtype_int16"); !s.HasTag("dtype:int16") || s.HasTag("codec:sharding") {
		t.Errorf("v3_dtype_int16 tags %v", s.Tags)
	}
}

func TestChunkKey(t *testing.T) {
	tests := []struct {
		name string
		idx  []int
		want string
	}{
		{"v3_dtype_int16", []int{1, 2}, "c/1/2"},
		{"v3_cke_default_dot", []int{3, 0}, "c.3.0"},
		{"v3_cke_v2_dot", []int{3, 0}, "3.0"},
		{"v3_cke_v2_slash", []int{3, 0}, "3/0"},
		{"v3_scalar_float64", nil, "c"},
		{"v3_scalar_bool_v2key", nil, "0"},
		{"v2_dtype_bool", []int{1, 4}, "1.4"},
	}
	for _, tc := range tests {
		c := Lookup(t, tc.name)
		if got := c.ChunkKey(tc.idx); got != tc.want {
			t.Errorf("%s: ChunkKey(%v) = %q, want %q", tc.name, tc.idx, got, tc.want)
		}
	}
	// Every stored grid object of a plain v3 array is found by ChunkKey.
	c := Lookup(t, "v3_dtype_int16")
	found := 0
	for _, idx := range GridIndices(c.Shape, c.GridChunkShape()) {
		if _, err := os.Stat(c.File(c.ChunkKey(idx))); err == nil {
			found++
		}
	}
	if found != c.ChunkObjectsPresent || found == 0 {
		t.Errorf("found %d chunks, manifest says %d present", found, c.ChunkObjectsPresent)
	}
}

func TestGridIndices(t *testing.T) {
	tests := []struct {
		shape, chunk []int
		want         [][]int
	}{
		{nil, nil, [][]int{{}}},
		{[]int{5}, []int{2}, [][]int{{0}, {1}, {2}}},
		{[]int{3, 4}, []int{2, 4}, [][]int{{0, 0}, {1, 0}}},
		{[]int{2, 3}, []int{1, 2}, [][]int{{0, 0}, {0, 1}, {1, 0}, {1, 1}}},
		{[]int{0, 3}, []int{1, 2}, nil},
	}
	for _, tc := range tests {
		if got := GridIndices(tc.shape, tc.chunk); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("GridIndices(%v, %v) = %v, want %v", tc.shape, tc.chunk, got, tc.want)
		}
	}
}

func TestReadExpectedMismatch(t *testing.T) {
	c := Lookup(t, "v3_dtype_int16")
	c.Shape = append([]int{1}, c.Shape...)
	if _, err := c.ReadExpected(); !errors.Is(err, ErrCorpus) {
		t.Errorf("wrong shape: %v", err)
	}
	c = Lookup(t, "v3_dtype_int16")
	c.Expected = "no_such.npy"
	if _, err := c.ReadExpected(); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

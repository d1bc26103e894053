package zarrbeam

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/gozarr/gozarr/nd"
)

func TestPlanRechunk(t *testing.T) {
	for _, c := range []struct {
		shape, source, target []int
		item                  int
		mem                   int64
		read, write           []int
	}{
		// The test array: 512² chunks to 4096² shards, uint8, 16 MiB.
		{[]int{8192, 8192}, []int{512, 512}, []int{4096, 4096}, 1, 16 << 20, []int{4096, 4096}, []int{4096, 4096}},
		// 32 MiB: two shards per write region, reads no wider than writes.
		{[]int{8192, 8192}, []int{512, 512}, []int{4096, 4096}, 1, 32 << 20, []int{4096, 8192}, []int{4096, 8192}},
		// Source chunks taller than the target's: reads keep their height.
		{[]int{97, 130}, []int{30, 7}, []int{20, 50}, 4, 8000, []int{30, 63}, []int{20, 100}},
		// Time series to maps (rechunker's classic): reads of whole
		// series grow along the last dimension up to the bound.
		{[]int{1000, 100, 100}, []int{1000, 1, 1}, []int{1, 100, 100}, 8, 1 << 20, []int{1000, 1, 100}, []int{13, 100, 100}},
	} {
		p, err := PlanRechunk(c.shape, c.source, c.target, c.item, c.mem)
		if err != nil {
			t.Errorf("%v %v→%v within %d: %v", c.shape, c.source, c.target, c.mem, err)
			continue
		}
		if !slices.Equal(p.Read, c.read) || !slices.Equal(p.Write, c.write) {
			t.Errorf("%v %v→%v within %d: read %v write %v, want %v %v", c.shape, c.source, c.target, c.mem, p.Read, p.Write, c.read, c.write)
		}
		if bytesOf(p.Read, c.item) > c.mem || bytesOf(p.Write, c.item) > c.mem {
			t.Errorf("%v: regions beyond the bound %d", p, c.mem)
		}
	}
	if _, err := PlanRechunk([]int{8192, 8192}, []int{512, 512}, []int{4096, 4096}, 1, 8<<20); !errors.Is(err, ErrInvalid) {
		t.Errorf("a 16 MiB shard within 8 MiB: %v, want ErrInvalid", err)
	}
	if _, err := PlanRechunk([]int{10}, []int{1, 1}, []int{1}, 1, 8); !errors.Is(err, ErrInvalid) {
		t.Errorf("rank mismatch: %v, want ErrInvalid", err)
	}
}

// TestTiles checks that tiles cover a box exactly once, aligned to the
// grid.
func TestTiles(t *testing.T) {
	start, shape, tile := []int{5, 0, 3}, []int{17, 4, 9}, []int{4, 3, 5}
	seen := make([]int, nd.NumElements(shape))
	n := 0
	for s, c := range tiles(start, shape, tile) {
		n++
		for d := range s {
			if s[d] != start[d] && s[d]%tile[d] != 0 {
				t.Fatalf("tile %v+%v not aligned", s, c)
			}
		}
		for i := range nd.NumElements(c) {
			idx, r := 0, i
			coord := make([]int, len(c))
			for d := len(c) - 1; d >= 0; d-- {
				coord[d], r = r%c[d]+s[d]-start[d], r/c[d]
			}
			for d := range coord {
				idx = idx*shape[d] + coord[d]
			}
			seen[idx]++
		}
	}
	for i, v := range seen {
		if v != 1 {
			t.Fatalf("element %d covered %d times", i, v)
		}
	}
	if want := 5 * 2 * 3; n != want {
		t.Errorf("%d tiles, want %d", n, want)
	}
	for range tiles([]int{0}, []int{0}, []int{4}) {
		t.Error("a tile of an empty box")
	}
}

func TestCopyBox(t *testing.T) {
	src := Region{Start: []int{2, 3}, Shape: []int{3, 4}, Data: make([]byte, 12*2)}
	for i := range src.Data {
		src.Data[i] = byte(i)
	}
	dst := Region{Start: []int{3, 5}, Shape: []int{3, 3}, Data: make([]byte, 9*2)}
	if n := copyBox(dst, src, 2); n != 4 {
		t.Fatalf("copied %d elements, want 4", n)
	}
	// dst (0,0) is src (1,2) → element 6; (0,1) src (1,3) → 7; (1,0) → 10; (1,1) → 11.
	want := []byte{12, 13, 14, 15, 0, 0, 20, 21, 22, 23, 0, 0, 0, 0, 0, 0, 0, 0}
	if !slices.Equal(dst.Data, want) {
		t.Errorf("copied %v, want %v", dst.Data, want)
	}
}

func TestKeys(t *testing.T) {
	for _, k := range [][]int{{}, {0}, {4096, 0, 12}} {
		got, err := ParseKey(FormatKey(k))
		if err != nil || !slices.Equal(got, k) {
			t.Errorf("%v: %q parsed as %v, %v", k, FormatKey(k), got, err)
		}
	}
	for _, k := range []string{"1,,2", "a", "-1", "1,2,"} {
		if _, err := ParseKey(k); !errors.Is(err, ErrInvalid) {
			t.Errorf("ParseKey(%q): %v, want ErrInvalid", k, err)
		}
	}
}

func TestRegionCoder(t *testing.T) {
	b := Region{Start: []int{0, 4096}, Shape: []int{2, 3}, Data: []byte{1, 2, 3, 4, 5, 6}}
	p, err := encodeRegion(b)
	if err != nil {
		t.Fatal(err)
	}
	got, err := decodeRegion(p)
	if err != nil || fmt.Sprint(got) != fmt.Sprint(b) {
		t.Errorf("round trip %v: %v, %v", b, got, err)
	}
	if _, err := encodeRegion(Region{Start: []int{1}, Shape: []int{-1}}); !errors.Is(err, ErrInvalid) {
		t.Errorf("negative shape encoded: %v", err)
	}
	for _, p := range [][]byte{nil, {0x80}, {2, 1}, {33}, {1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}} {
		if _, err := decodeRegion(p); !errors.Is(err, ErrInvalid) {
			t.Errorf("decodeRegion(%v): %v, want ErrInvalid", p, err)
		}
	}
}

// FuzzDecodeRegion: the coder never panics, and what it decodes encodes
// back to the same bytes.
func FuzzDecodeRegion(f *testing.F) {
	f.Fuzz(func(t *testing.T, p []byte) {
		b, err := decodeRegion(p)
		if err != nil {
			return
		}
		q, err := encodeRegion(b)
		if err != nil {
			t.Fatalf("decoded %v does not encode: %v", b, err)
		}
		if b2, err := decodeRegion(q); err != nil || fmt.Sprint(b2) != fmt.Sprint(b) {
			t.Fatalf("re-decoded %v, %v; want %v", b2, err, b)
		}
	})
}

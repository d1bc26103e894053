package pipeline

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/sharding"
)

// TestGatherParallelEqualsGather checks the slabbed gather against one
// nd.Gather, with the first dimension listed and not.
func TestGatherParallelEqualsGather(t *testing.T) {
	rows, cols := 1500, 3000 // 2 workers' worth of gatherMinBytes at 2-byte items
	src := make([]byte, rows*cols*2)
	for i := range src {
		src[i] = byte(i * 7)
	}
	r := rand.New(rand.NewPCG(1, 2))
	order := make([]int, 2*rows)
	for i := range order {
		order[i] = r.IntN(rows)
	}
	colOrder := make([]int, cols)
	for i := range colOrder {
		colOrder[i] = r.IntN(cols)
	}
	for _, index := range [][][]int{{order, nil}, {order, colOrder}, {nil, colOrder}} {
		n := rows
		if index[0] != nil {
			n = len(index[0])
		}
		want := make([]byte, n*cols*2)
		got := make([]byte, n*cols*2)
		sv := nd.Contiguous(src, []int{rows, cols}, 2)
		nd.Gather(nd.Contiguous(want, []int{n, cols}, 2), sv, index)
		gatherParallel(nd.Contiguous(got, []int{n, cols}, 2), sv, index, 4)
		if !bytes.Equal(got, want) {
			t.Fatalf("index lists %v/%v: parallel gather differs", index[0] != nil, index[1] != nil)
		}
	}
}

// TestSortPointsKeyEqualsTuple checks the one-integer hierarchical key
// against the tuple comparison it stands for (the fallback for hierarchies
// past 64 bits), on a grid of shards with nested inner shards and on a
// plain grid, with repeats, for reads and writes.
func TestSortPointsKeyEqualsTuple(t *testing.T) {
	nested := `[{"name": "sharding_indexed", "configuration": {"chunk_shape": [4, 6],
		"codecs": [{"name": "sharding_indexed", "configuration": {"chunk_shape": [2, 3], "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
			"index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]}}],
		"index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]}}]`
	for _, c := range []struct {
		specs string
		chunk []int
	}{{nested, []int{8, 12}}, {`[{"name": "bytes", "configuration": {"endian": "little"}}]`, []int{5, 7}}} {
		var specs []codecs.Spec
		if err := json.Unmarshal([]byte(c.specs), &specs); err != nil {
			t.Fatal(err)
		}
		chain, err := codecs.NewChain(specs, codecs.ChunkRepr{Shape: c.chunk, DType: dtype.TypeUint8, Fill: []byte{0}})
		if err != nil {
			t.Fatal(err)
		}
		l, err := sharding.LayoutOf(chain)
		if err != nil {
			t.Fatal(err)
		}
		g := &Grid{Shape: []int{37, 50}, ChunkShape: c.chunk, Chain: chain, Shard: l}
		r := rand.New(rand.NewPCG(3, 4))
		pts := nd.Points{Rank: 2}
		for range 3000 {
			pts.Coords = append(pts.Coords, r.IntN(37), r.IntN(50))
		}
		for _, last := range []bool{false, true} {
			s1, o1 := sortPoints(g, pts, last)
			s2, o2 := sortPointsByTuple(g, pts, last)
			if !slices.Equal(s1.Coords, s2.Coords) || !slices.Equal(o1, o2) {
				t.Fatalf("chunks %v, write %v: the integer key and the tuple sort differ", c.chunk, last)
			}
			if len(o1) == 0 || s1.Len() >= pts.Len() {
				t.Fatalf("chunks %v: %d distinct of %d points: repeats expected", c.chunk, s1.Len(), pts.Len())
			}
		}
		sorted, _ := sortPoints(g, pts, false)
		if again, order := sortPoints(g, sorted, false); order != nil || !slices.Equal(again.Coords, sorted.Coords) {
			t.Fatalf("chunks %v: sorted distinct points are sorted again", c.chunk)
		}
	}
}

func TestRadixSortStable(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{0, 1, 255, 256, 3000} {
		for _, bitsUsed := range []uint{3, 17, 64} {
			type kv struct{ k, v uint64 }
			xs := make([]kv, n)
			for i := range xs {
				xs[i] = kv{r.Uint64() >> (64 - bitsUsed), uint64(i)}
			}
			want := slices.Clone(xs)
			slices.SortStableFunc(want, func(a, b kv) int {
				switch {
				case a.k < b.k:
					return -1
				case a.k > b.k:
					return 1
				}
				return 0
			})
			got := radixSort(xs, func(x kv) uint64 { return x.k })
			if !slices.Equal(got, want) {
				t.Fatalf("n=%d, %d-bit keys: radix sort differs from a stable sort", n, bitsUsed)
			}
		}
	}
}

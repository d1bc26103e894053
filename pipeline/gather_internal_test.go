package pipeline

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/gozarr/gozarr/nd"
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

package nd

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestPlacedParts checks the parts of placed points against the points
// they were made from: 2-D points grouped by shards of 8 × 6 and inner
// chunks of 4 × 3 of a 16 × 12 array, asked in random order with
// repeats. The parts carry the chunks' coordinates and runs given; every
// point copied out of its inner chunk (a view whose elements hold their
// C-order index: contiguous, taking the load-and-store loops of items of
// 1, 2, 4 and 8 bytes and the general one of 3; or a strided view of a
// larger buffer, taking the coordinates path) lands in its place; a
// missing chunk fills the places; CopyIn writes each point's value into
// its element; lists that do not fit end the parts early.
func TestPlacedParts(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	shard, inner := []int{8, 6}, []int{4, 3}
	shape := []int{16, 12}
	const n = 300
	asked := make([][]int, n)
	for k := range asked {
		asked[k] = []int{r.IntN(shape[0]), r.IntN(shape[1])}
		if k%4 == 3 {
			asked[k] = asked[r.IntN(k)]
		}
	}
	key := func(p []int) []int { // shard, then inner chunk within it
		return []int{p[0] / shard[0], p[1] / shard[1], p[0] % shard[0] / inner[0], p[1] % shard[1] / inner[1]}
	}
	order := make([]int, n)
	for k := range order {
		order[k] = k
	}
	slices.SortStableFunc(order, func(a, b int) int { return slices.Compare(key(asked[a]), key(asked[b])) })
	pp := PlacedPoints{Rank: 2, ElemShape: inner}
	for i, k := range order {
		p := asked[k]
		pp.Elems = append(pp.Elems, uint64(k)<<ElemBits|uint64(p[0]%inner[0]*inner[1]+p[1]%inner[1]))
		last := i+1 == n
		if last || !slices.Equal(key(asked[order[i+1]])[:2], key(p)[:2]) {
			pp.Ends, pp.Coords = append(pp.Ends, i+1), append(pp.Coords, key(p)[:2]...)
		}
		if last || !slices.Equal(key(asked[order[i+1]]), key(p)) {
			pp.InnerEnds, pp.InnerCoords = append(pp.InnerEnds, i+1), append(pp.InnerCoords, key(p)[2:]...)
		}
	}
	for _, item := range []int{1, 2, 4, 8, 3} {
		for _, strided := range []bool{false, true} {
			out := Contiguous(make([]byte, n*item), []int{1, n}, item)
			seen := make([]bool, n)
			parts, inners := 0, 0
			for p := range pp.Parts() {
				if !p.Gathers() || p.IsWhole(shard) || p.Points != nil {
					t.Fatalf("part %d: gathers %v, whole %v, points %v", parts, p.Gathers(), p.IsWhole(shard), p.Points)
				}
				if !slices.Equal(p.Coords, pp.Coords[2*parts:2*parts+2]) || p.Count[1] != len(p.Elems) {
					t.Fatalf("part %d: coords %v, %d points, %d elements", parts, p.Coords, p.Count[1], len(p.Elems))
				}
				if p.NumParts(shard) != 0 {
					t.Fatalf("part %d: %d parts of another shape, want none", parts, p.NumParts(shard))
				}
				m := p.NumParts(inner)
				dst := p.DstView(out)
				for q := range p.Parts(inner) {
					m--
					if !slices.Equal(q.Coords, pp.InnerCoords[2*inners:2*inners+2]) {
						t.Fatalf("inner part %d: coords %v, want %v", inners, q.Coords, pp.InnerCoords[2*inners:2*inners+2])
					}
					// The inner chunk: element e holds e,
					// in a view of its own or one with gaps between its rows.
					buf := make([]byte, 2*item*NumElements(inner)+item)
					chunk := View{Data: buf, Offset: item, Shape: inner, Strides: CStrides(inner, item), ItemSize: item}
					if strided {
						chunk.Strides[0] *= 2
					}
					for i := range inner[0] {
						for j := range inner[1] {
							for b := range item { // byte b of element e holds e + 31 b
								buf[chunk.Offset+i*chunk.Strides[0]+j*chunk.Strides[1]+b] = byte(i*inner[1] + j + 31*b)
							}
						}
					}
					q.CopyOut(q.DstView(dst), chunk)
					for j, x := range q.Elems {
						k := int(x >> ElemBits)
						seen[k] = true
						if q := order[pp.InnerEnds[inners]-len(q.Elems)+j]; q != k {
							t.Fatalf("inner part %d point %d: place %d, want %d", inners, j, k, q)
						}
					}
					inners++
				}
				if m != 0 {
					t.Fatalf("part %d: NumParts and Parts differ by %d", parts, m)
				}
				parts++
			}
			if parts != len(pp.Ends) || inners != len(pp.InnerEnds) {
				t.Fatalf("%d parts, %d inner, want %d, %d", parts, inners, len(pp.Ends), len(pp.InnerEnds))
			}
			for k, p := range asked {
				if !seen[k] {
					t.Fatalf("point %d never placed", k)
				}
				for b := range item {
					if got, want := out.Data[k*item+b], byte(p[0]%inner[0]*inner[1]+p[1]%inner[1]+31*b); got != want {
						t.Fatalf("item %d, strided %v: point %d %v byte %d = %d, want %d", item, strided, k, p, b, got, want)
					}
				}
			}
		}
	}
	// Fill and CopyIn on one inner chunk's part.
	for p := range pp.Parts() {
		for q := range p.Parts(inner) {
			out := Contiguous(make([]byte, 4*n), []int{1, n}, 4)
			dst := q.DstView(p.DstView(out))
			q.FillPlaces(dst, []byte{9, 9, 9, 9})
			for j := range 4 * n {
				k := j / 4
				at := slices.ContainsFunc(q.Elems, func(x uint64) bool { return int(x>>ElemBits) == k })
				if (out.Data[j] == 9) != at {
					t.Fatalf("fill: byte %d of point %d is %d (point in the part: %v)", j, k, out.Data[j], at)
				}
			}
			for k := range n {
				out.Data[4*k] = byte(k)
			}
			chunk := Contiguous(make([]byte, 4*NumElements(inner)), inner, 4)
			q.CopyIn(chunk, dst)
			for _, x := range q.Elems {
				if e, k := int(x&(1<<ElemBits-1)), int(x>>ElemBits); chunk.Data[4*e] != byte(k) && !repeatedAfter(q.Elems, x) {
					t.Fatalf("copy in: element %d = %d, want point %d's", e, chunk.Data[4*e], k)
				}
			}
		}
		break
	}
	// Lists that do not fit.
	for _, bad := range []PlacedPoints{
		{Rank: 2, Elems: pp.Elems, ElemShape: inner, Ends: []int{0}, Coords: []int{0, 0}},
		{Rank: 2, Elems: pp.Elems, ElemShape: inner, Ends: []int{n + 1}, Coords: []int{0, 0}},
		{Rank: 2, Elems: pp.Elems, ElemShape: inner, Ends: pp.Ends, Coords: pp.Coords[:1]},
		{Rank: 2, Elems: pp.Elems, ElemShape: inner, Ends: pp.Ends, Coords: pp.Coords, InnerCoords: pp.InnerCoords, // a shard end that is no inner end
			InnerEnds: slices.DeleteFunc(slices.Clone(pp.InnerEnds), func(e int) bool { return e == pp.Ends[0] })},
		{Rank: 3, Elems: pp.Elems, ElemShape: inner, Ends: pp.Ends, Coords: pp.Coords},
	} {
		m := 0
		for range bad.Parts() {
			m++
		}
		if m > 0 && m >= len(pp.Ends) {
			t.Fatalf("lists that do not fit: %d parts, want them to end early", m)
		}
	}
}

// repeatedAfter reports whether x's element is taken again after x in
// elems (then the later point's value wins).
func repeatedAfter(elems []uint64, x uint64) bool {
	i := slices.Index(elems, x)
	for _, y := range elems[i+1:] {
		if y&(1<<ElemBits-1) == x&(1<<ElemBits-1) {
			return true
		}
	}
	return false
}

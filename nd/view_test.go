package nd

import (
	"bytes"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/gozarr/gozarr/internal/cputime"
)

// naiveCopy copies element by element, the reference for Copy.
func naiveCopy(dst, src View) {
	forEachIndex(dst.Shape, func(idx []int) {
		do, so := dst.Offset, src.Offset
		for d, i := range idx {
			do += i * dst.Strides[d]
			so += i * src.Strides[d]
		}
		copy(dst.Data[do:do+dst.ItemSize], src.Data[so:so+src.ItemSize])
	})
}

// naiveFill fills element by element, the reference for Fill.
func naiveFill(dst View, elem []byte) {
	forEachIndex(dst.Shape, func(idx []int) {
		do := dst.Offset
		for d, i := range idx {
			do += i * dst.Strides[d]
		}
		copy(dst.Data[do:do+dst.ItemSize], elem)
	})
}

func forEachIndex(shape []int, fn func([]int)) {
	if NumElements(shape) == 0 {
		return
	}
	idx := make([]int, len(shape))
	for {
		fn(idx)
		d := len(idx) - 1
		for ; d >= 0; d-- {
			if idx[d]++; idx[d] < shape[d] {
				break
			}
			idx[d] = 0
		}
		if d < 0 {
			return
		}
	}
}

// randomView draws a view of the given shape inside a random-filled base
// array, with random offsets, steps (negative included) and sometimes a
// transposition of the base's strides.
func randomView(r *rand.Rand, shape []int, itemSize int) View {
	base := make([]int, len(shape))
	start := make([]int, len(shape))
	step := make([]int, len(shape))
	for d, n := range shape {
		s := 1
		if r.IntN(3) == 0 {
			s = 1 + r.IntN(3)
		}
		if r.IntN(3) == 0 {
			s = -s
		}
		step[d] = s
		span := 1
		if n > 0 {
			span = (n-1)*max(s, -s) + 1
		}
		base[d] = span + r.IntN(3)
		if s > 0 {
			start[d] = r.IntN(base[d] - span + 1)
		} else {
			start[d] = base[d] - 1 - r.IntN(base[d]-span+1)
		}
	}
	data := make([]byte, NumElements(base)*itemSize+r.IntN(8))
	for i := range data {
		data[i] = byte(r.Uint32())
	}
	v := Contiguous(data, base, itemSize)
	if len(shape) > 1 && r.IntN(4) == 0 { // Fortran order base
		s := itemSize
		for d := range base {
			v.Strides[d] = s
			s *= base[d]
		}
	}
	for d := range shape {
		if start[d] >= base[d] || start[d] < 0 {
			start[d] = 0 // only when n == 0
		}
	}
	return v.Slice(start, shape, step)
}

func TestCopyFillAgainstNaive(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for i := range 4000 {
		nd := r.IntN(5)
		shape := make([]int, nd)
		for d := range shape {
			shape[d] = r.IntN(7)
			if r.IntN(6) == 0 {
				shape[d] = 1
			}
		}
		itemSize := []int{1, 2, 3, 4, 8, 16}[r.IntN(6)]
		src := randomView(r, shape, itemSize)
		dst := randomView(r, shape, itemSize)
		want := bytes.Clone(dst.Data)
		ref := dst
		ref.Data = want
		naiveCopy(ref, src)
		Copy(dst, src)
		if !bytes.Equal(dst.Data, want) {
			t.Fatalf("case %d: Copy shape %v item %d: dst strides %v src strides %v differ from element loop",
				i, shape, itemSize, dst.Strides, src.Strides)
		}
		elem := make([]byte, itemSize)
		for k := range elem {
			elem[k] = byte(r.Uint32())
		}
		naiveFill(ref, elem)
		Fill(dst, elem)
		if !bytes.Equal(dst.Data, want) {
			t.Fatalf("case %d: Fill shape %v item %d strides %v differs from element loop", i, shape, itemSize, dst.Strides)
		}
	}
}

// TestCopyShortRuns checks the short-run path of Copy (copyRuns: runs of
// 16, 32 and 64 bytes as arrays, others with copy) against the element
// loop: contiguous inner runs of those sizes and around them, under outer
// dimensions stepped forward and backward, into and out of larger arrays.
func TestCopyShortRuns(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, run := range []int{8, 16, 24, 32, 48, 64, 80, 128, 512, 1024, 2048} {
		for _, item := range []int{1, 2, 4, 8} {
			if run%item != 0 {
				continue
			}
			for range 20 {
				shape := []int{1 + r.IntN(4), 1 + r.IntN(9), run / item}
				var src, dst View
				// Inner dimension contiguous in both, so the runs are whole.
				for _, v := range []*View{&src, &dst} {
					base := Contiguous(make([]byte, (shape[0]+2)*(shape[1]+3)*(shape[2]+1)*item), []int{shape[0] + 2, shape[1] + 3, shape[2] + 1}, item)
					for i := range base.Data {
						base.Data[i] = byte(r.Uint32())
					}
					step := []int{1 - 2*r.IntN(2), 1 - 2*r.IntN(2), 1}
					start := []int{r.IntN(2), r.IntN(3), r.IntN(2)}
					for d := range 2 {
						if step[d] < 0 {
							start[d] += shape[d] - 1
						}
					}
					*v = base.Slice(start, shape, step)
				}
				want := bytes.Clone(dst.Data)
				ref := dst
				ref.Data = want
				naiveCopy(ref, src)
				Copy(dst, src)
				if !bytes.Equal(dst.Data, want) {
					t.Fatalf("run %d item %d shape %v: dst strides %v src strides %v differ from element loop", run, item, shape, dst.Strides, src.Strides)
				}
			}
		}
	}
}

func TestCopyExamples(t *testing.T) {
	// Reverse a 2x3 array of int16 in both dimensions.
	src := Contiguous([]byte{1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 0}, []int{2, 3}, 2)
	dst := Contiguous(make([]byte, 12), []int{2, 3}, 2)
	Copy(dst, src.Slice([]int{1, 2}, []int{2, 3}, []int{-1, -1}))
	if want := []byte{6, 0, 5, 0, 4, 0, 3, 0, 2, 0, 1, 0}; !bytes.Equal(dst.Data, want) {
		t.Fatalf("reversed: %v", dst.Data)
	}
	// 0-d views copy one element.
	a := View{Data: []byte{9, 8, 7, 6}, ItemSize: 4}
	b := View{Data: make([]byte, 6), Offset: 2, ItemSize: 4}
	Copy(b, a)
	if want := []byte{0, 0, 9, 8, 7, 6}; !bytes.Equal(b.Data, want) {
		t.Fatalf("0-d: %v", b.Data)
	}
	// Fill every other byte.
	f := Contiguous(make([]byte, 6), []int{6}, 1)
	Fill(f.Slice([]int{1}, []int{3}, []int{2}), []byte{0xaa})
	if want := []byte{0, 0xaa, 0, 0xaa, 0, 0xaa}; !bytes.Equal(f.Data, want) {
		t.Fatalf("fill: %v", f.Data)
	}
}

func TestCopyShapeMismatchPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("no panic")
		}
	}()
	Copy(Contiguous(make([]byte, 4), []int{4}, 1), Contiguous(make([]byte, 4), []int{2, 2}, 1))
}

const side = 4096

var bigSrc = func() View { return Contiguous(make([]byte, side*side*4), []int{side, side}, 4) }

func BenchmarkMemcpyBaseline1MiB(b *testing.B) {
	src, dst := make([]byte, 1<<20), make([]byte, 1<<20)
	b.SetBytes(1 << 20)
	b.ReportAllocs()
	for b.Loop() {
		copy(dst, src)
	}
}

func BenchmarkCopyContiguous1MiB(b *testing.B) {
	src := Contiguous(make([]byte, 1<<20), []int{512, 512}, 4)
	dst := Contiguous(make([]byte, 1<<20), []int{512, 512}, 4)
	b.SetBytes(1 << 20)
	b.ReportAllocs()
	for b.Loop() {
		Copy(dst, src)
	}
}

// BenchmarkCopySubBox copies a 512x512 float32 box out of a 4096x4096
// array into a chunk buffer: 512 runs of 2 KiB.
func BenchmarkCopySubBox(b *testing.B) {
	src := bigSrc().Slice([]int{1024, 2048}, []int{512, 512}, []int{1, 1})
	dst := Contiguous(make([]byte, 512*512*4), []int{512, 512}, 4)
	b.SetBytes(512 * 512 * 4)
	b.ReportAllocs()
	for b.Loop() {
		Copy(dst, src)
	}
}

// BenchmarkCopyStepped gathers every other float32 of every other row of
// a 1024x1024 box of a 4096x4096 array into a 512x512 chunk.
func BenchmarkCopyStepped(b *testing.B) {
	for _, isz := range []int{1, 2, 4, 8} {
		b.Run(map[int]string{1: "u8", 2: "u16", 4: "f32", 8: "f64"}[isz], func(b *testing.B) {
			src := Contiguous(make([]byte, side*side*isz), []int{side, side}, isz).
				Slice([]int{0, 0}, []int{512, 512}, []int{2, 2})
			dst := Contiguous(make([]byte, 512*512*isz), []int{512, 512}, isz)
			b.SetBytes(int64(512 * 512 * isz))
			b.ReportAllocs()
			for b.Loop() {
				Copy(dst, src)
			}
		})
	}
}

// BenchmarkCopyReversed copies a 512x512 float32 box with both
// dimensions reversed.
func BenchmarkCopyReversed(b *testing.B) {
	src := bigSrc().Slice([]int{1535, 2559}, []int{512, 512}, []int{-1, -1})
	dst := Contiguous(make([]byte, 512*512*4), []int{512, 512}, 4)
	b.SetBytes(512 * 512 * 4)
	b.ReportAllocs()
	for b.Loop() {
		Copy(dst, src)
	}
}

func BenchmarkFillSubBox(b *testing.B) {
	dst := bigSrc().Slice([]int{1024, 2048}, []int{512, 512}, []int{1, 1})
	b.SetBytes(512 * 512 * 4)
	b.ReportAllocs()
	for b.Loop() {
		Fill(dst, []byte{1, 2, 3, 4})
	}
}

func BenchmarkFillStepped(b *testing.B) {
	dst := bigSrc().Slice([]int{0, 0}, []int{512, 512}, []int{2, 2})
	b.SetBytes(512 * 512 * 4)
	b.ReportAllocs()
	for b.Loop() {
		Fill(dst, []byte{1, 2, 3, 4})
	}
}

func TestCopyFillDoNotAllocate(t *testing.T) {
	src := Contiguous(make([]byte, 2*3*4*5*8), []int{2, 3, 4, 5}, 8).
		Slice([]int{1, 0, 3, 0}, []int{2, 3, 2, 3}, []int{-1, 1, -2, 2})
	dst := Contiguous(make([]byte, 2*3*2*3*8), []int{2, 3, 2, 3}, 8)
	elem := make([]byte, 8)
	if n := testing.AllocsPerRun(10, func() { Copy(dst, src); Fill(src, elem) }); n != 0 {
		t.Fatalf("%v allocations per Copy+Fill", n)
	}
}

// BenchmarkCopyShortRuns places a decoded 64³ uint16 inner chunk (512 KiB)
// into a larger output, as a read of zarrs' 1024³ benchmark arrays does:
// runs of 128 bytes (and 16 to 512 bytes for chunks 8 to 256 wide). cold: the output (128 MiB) is far larger than the CPU
// caches, chunk after chunk lands in a new place, as in a read-all; warm:
// one place, in cache. x-memcpy is the time of copying the same bytes as
// one run, over Copy's: the limit for these sizes (1: none lost to the
// runs).
func BenchmarkCopyShortRuns(b *testing.B) {
	for _, c := range []struct {
		name string
		edge int // the chunk's edge: runs of 2*edge bytes
	}{{"8", 8}, {"16", 16}, {"32", 32}, {"64", 64}, {"256", 256}} {
		for _, cold := range []bool{false, true} {
			name := c.name + "/warm"
			if cold {
				name = c.name + "/cold"
			}
			b.Run(name, func(b *testing.B) {
				e := c.edge
				rows := (1 << 18) / (e * e) // a chunk of 512 KiB: rows × e × e
				chunk := Contiguous(make([]byte, rows*e*e*2), []int{rows, e, e}, 2)
				for i := range chunk.Data {
					chunk.Data[i] = byte(i)
				}
				// The output: rows × W × W uint16 with W = 8e (64 chunks per
				// layer); cold uses all of a 128 MiB one, warm one place.
				w := 8 * e
				layers := 1
				if cold {
					layers = max(1, (128<<20)/(rows*w*w*2))
				}
				out := Contiguous(make([]byte, layers*rows*w*w*2), []int{layers * rows, w, w}, 2)
				flat := make([]byte, len(chunk.Data))
				b.SetBytes(int64(len(chunk.Data)))
				b.ReportAllocs()
				// Thread CPU time: on a shared machine wall time counts the
				// other processes' turns.
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				var tCopy, tFlat time.Duration
				k := 0
				for b.Loop() {
					pl := 0
					if cold {
						pl = k % (layers * 64)
						k++
					}
					z, y, x := (pl/64)*rows, (pl%64/8)*e, (pl%8)*e
					dst := out.Slice([]int{z, y, x}, []int{rows, e, e}, []int{1, 1, 1})
					t0 := cputime.Thread()
					Copy(dst, chunk)
					t1 := cputime.Thread()
					// The one-run copy goes as far from the boxes lately
					// written as the output allows: cold as they are.
					fo := 0
					if cold {
						fo = (dst.Offset + len(out.Data)/2) % (len(out.Data) - len(flat))
					}
					copy(out.Data[fo:fo+len(flat)], chunk.Data)
					tCopy += t1 - t0
					tFlat += cputime.Thread() - t1
				}
				b.ReportMetric(float64(tFlat)/float64(tCopy), "x-memcpy")
				b.ReportMetric(float64(tCopy.Nanoseconds())/float64(b.N), "cpu-ns/op")
			})
		}
	}
}

package nd

import (
	"bytes"
	"math/rand/v2"
	"testing"
	"unsafe"
)

// runOffsets returns where each run starts in data and its length.
func runOffsets(data []byte, runs [][]byte) (offs, lens []int) {
	base := uintptr(unsafe.Pointer(unsafe.SliceData(data)))
	for _, r := range runs {
		offs = append(offs, int(uintptr(unsafe.Pointer(unsafe.SliceData(r)))-base))
		lens = append(lens, len(r))
	}
	return offs, lens
}

// scatter writes src's bytes into runs in turn, as a vectored read would,
// and reports whether they held exactly len(src) bytes.
func scatter(runs [][]byte, src []byte) bool {
	for _, r := range runs {
		if len(src) < len(r) {
			return false
		}
		src = src[copy(r, src):]
	}
	return len(src) == 0
}

func TestAppendRunsAgainstCopy(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for i := range 4000 {
		shape := make([]int, r.IntN(5))
		for d := range shape {
			shape[d] = r.IntN(7)
			if r.IntN(6) == 0 {
				shape[d] = 1
			}
		}
		itemSize := []int{1, 2, 3, 4, 8, 16}[r.IntN(6)]
		dst := randomView(r, shape, itemSize)
		src := make([]byte, NumElements(shape)*itemSize)
		for k := range src {
			src[k] = byte(r.Uint32())
		}
		want := bytes.Clone(dst.Data)
		ref := dst
		ref.Data = want
		Copy(ref, Contiguous(src, shape, itemSize))

		pre := [][]byte{[]byte("kept")}
		runs := dst.AppendRuns(pre)
		if len(runs) == 0 || string(runs[0]) != "kept" {
			t.Fatalf("case %d: AppendRuns dropped what dst held", i)
		}
		runs = runs[1:]
		if rl := dst.RunLen(); len(runs) > 0 {
			for k, run := range runs {
				if len(run) < rl {
					t.Fatalf("case %d: run %d of shape %v strides %v is %d bytes, RunLen says %d", i, k, shape, dst.Strides, len(run), rl)
				}
			}
			if b, ok := dst.IsContiguous(); ok && rl != len(b) {
				t.Fatalf("case %d: contiguous view of %d bytes has RunLen %d", i, len(b), rl)
			}
		}
		if !scatter(runs, src) {
			t.Fatalf("case %d: runs of shape %v item %d do not hold %d bytes", i, shape, itemSize, len(src))
		}
		if !bytes.Equal(dst.Data, want) {
			t.Fatalf("case %d: scattering into the runs of shape %v item %d strides %v differs from Copy", i, shape, itemSize, dst.Strides)
		}
		// Runs are maximal: no run ends where the next one starts.
		offs, lens := runOffsets(dst.Data, runs)
		for k := 1; k < len(runs); k++ {
			if offs[k-1]+lens[k-1] == offs[k] {
				t.Fatalf("case %d: runs %d and %d of shape %v strides %v are adjacent, not merged", i, k-1, k, shape, dst.Strides)
			}
		}
		for k, run := range runs {
			if cap(run) != len(run) {
				t.Fatalf("case %d: run %d has capacity %d past its length %d", i, k, cap(run), len(run))
			}
		}
	}
}

func TestAppendRunsExamples(t *testing.T) {
	big := Contiguous(make([]byte, 64*32*4), []int{64, 32}, 4)
	cube := Contiguous(make([]byte, 4*6*8*2), []int{4, 6, 8}, 2)
	for _, tc := range []struct {
		name   string
		v      View
		offs   []int
		lens   []int
		runLen int
	}{
		{"whole array: one run", big, []int{0}, []int{64 * 32 * 4}, 8192},
		{"box of whole rows: one run", big.Slice([]int{3, 0}, []int{2, 32}, []int{1, 1}), []int{3 * 128}, []int{256}, 256},
		{"box: one run per row", big.Slice([]int{1, 8}, []int{3, 4}, []int{1, 1}), []int{128 + 32, 256 + 32, 384 + 32}, []int{16, 16, 16}, 16},
		{"stepped columns: one run per element", big.Slice([]int{0, 1}, []int{1, 3}, []int{1, 2}), []int{4, 12, 20}, []int{4, 4, 4}, 4},
		{"reversed row: one run per element", big.Slice([]int{0, 2}, []int{1, 3}, []int{1, -1}), []int{8, 4, 0}, []int{4, 4, 4}, 4},
		{"reversed rows of whole rows", big.Slice([]int{2, 0}, []int{2, 32}, []int{-1, 1}), []int{256, 128}, []int{128, 128}, 128},
		{"3-d: trailing two axes merge", cube.Slice([]int{1, 0, 0}, []int{2, 6, 8}, []int{1, 1, 1}), []int{96}, []int{192}, 192},
		{"3-d: middle axis cut", cube.Slice([]int{0, 2, 0}, []int{2, 3, 8}, []int{1, 1, 1}), []int{32, 96 + 32}, []int{48, 48}, 48},
		{"0-d: one element", View{Data: make([]byte, 12), Offset: 4, ItemSize: 8}, []int{4}, []int{8}, 8},
		{"empty", big.Slice([]int{0, 0}, []int{0, 32}, []int{1, 1}), nil, nil, 0},
		{"length-1 axes are dropped", Contiguous(make([]byte, 24), []int{1, 3, 1, 2}, 4), []int{0}, []int{24}, 24},
		{"runs meeting across rows join", View{Data: make([]byte, 64), Shape: []int{2, 2}, Strides: []int{12, 8}, ItemSize: 4}, []int{0, 8, 20}, []int{4, 8, 4}, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			runs := tc.v.AppendRuns(nil)
			offs, lens := runOffsets(tc.v.Data, runs)
			if !equalInts(offs, tc.offs) || !equalInts(lens, tc.lens) {
				t.Errorf("AppendRuns: offsets %v lengths %v, want %v %v", offs, lens, tc.offs, tc.lens)
			}
			if rl := tc.v.RunLen(); rl != tc.runLen {
				t.Errorf("RunLen = %d, want %d", rl, tc.runLen)
			}
		})
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestAppendRunsDoesNotAllocate(t *testing.T) {
	v := Contiguous(make([]byte, 64*64*4), []int{64, 64}, 4).Slice([]int{8, 8}, []int{16, 16}, []int{1, 1})
	dst := make([][]byte, 0, 16)
	if n := testing.AllocsPerRun(10, func() { dst = v.AppendRuns(dst[:0]) }); n != 0 {
		t.Fatalf("%v allocations per AppendRuns into a slice with room", n)
	}
}

// BenchmarkAppendRuns lists the 512 runs of a 512x512 float32 box of an
// 8192-wide array, as a vectored chunk read does.
func BenchmarkAppendRuns(b *testing.B) {
	v := View{Data: make([]byte, 1024*8192*4), Shape: []int{512, 512}, Strides: []int{8192 * 4, 4}, ItemSize: 4, Offset: 4096}
	dst := make([][]byte, 0, 512)
	b.SetBytes(512 * 512 * 4)
	b.ReportAllocs()
	for b.Loop() {
		dst = v.AppendRuns(dst[:0])
	}
}

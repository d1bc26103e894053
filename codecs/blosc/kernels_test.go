package blosc

import (
	"bytes"
	"fmt"
	"testing"
)

// TestUnshuffleKernels checks every unshuffle path against the byte loop
// on its own, so that the safe kernels are tested where the unsafe word
// kernels or assembly take over in unshuffle: the safe kernels, the word
// kernels, and the word kernels started after a first stretch (as after
// the assembly), for type sizes with and without a kernel.
func TestUnshuffleKernels(t *testing.T) {
	for _, ts := range []int{2, 3, 4, 6, 8, 12, 16, 20, 24} {
		for _, n := range []int{0, 7, 8, 16, 23, 64, 1000, 4099} {
			src := genData(n*ts+ts-1, 1, uint64(ts*n+1))
			want := make([]byte, len(src))
			refUnshuffle(want, src, ts)
			paths := []struct {
				name string
				run  func(dst []byte)
			}{
				{"safe", func(dst []byte) { unshuffleSafe(dst, src, ts, n, 0); copy(dst[n*ts:], src[n*ts:]) }},
				{"go", func(dst []byte) { unshuffleGo(dst, src, ts, n, 0); copy(dst[n*ts:], src[n*ts:]) }},
				{"go-from-16", func(dst []byte) {
					i0 := min(16, n)
					refUnshuffleFirst(dst, src, ts, n, i0)
					unshuffleGo(dst, src, ts, n, i0)
					copy(dst[n*ts:], src[n*ts:])
				}},
				{"unshuffle", func(dst []byte) { unshuffle(dst, src, ts) }},
			}
			for _, p := range paths {
				got := make([]byte, len(src))
				p.run(got)
				if !bytes.Equal(got, want) {
					t.Errorf("%s ts=%d n=%d: differs from the byte loop", p.name, ts, n)
				}
			}
		}
	}
}

// refUnshuffleFirst places elements 0..i0-1 with the byte loop.
func refUnshuffleFirst(dst, src []byte, ts, n, i0 int) {
	for i := range i0 {
		for j := range ts {
			dst[i*ts+j] = src[j*n+i]
		}
	}
}

// TestBitRowsKernels checks the safe and word bit-row kernels against the
// definition (bit b of byte 8c+k of the stream is bit k of byte c of row b).
func TestBitRowsKernels(t *testing.T) {
	for _, rl := range []int{1, 7, 8, 9, 16, 64, 129} {
		rows := genData(8*rl, 1, uint64(rl))
		want := make([]byte, 8*rl)
		for b := range 8 {
			for c := range rl {
				for k := range 8 {
					want[8*c+k] |= (rows[b*rl+c] >> k & 1) << b
				}
			}
		}
		for _, c0 := range []int{0, 8} {
			got := make([]byte, 8*rl)
			bitRowsSafe(got, rows, rl, 0)
			if !bytes.Equal(got, want) {
				t.Errorf("bitRowsSafe rl=%d differs", rl)
			}
			got = make([]byte, 8*rl)
			c := min(c0, rl)
			bitRowsSafe(got, rows, rl, 0) // fills the first columns
			clear(got[8*c:])
			bitRowsSafe(got, rows, rl, bitRowsWords(got, rows, rl, c))
			if !bytes.Equal(got, want) {
				t.Errorf("bitRowsWords rl=%d from %d differs", rl, c)
			}
		}
	}
}

func BenchmarkUnshuffleSafe(b *testing.B) {
	for _, ts := range []int{2, 4, 8} {
		src := genData(256<<10, ts, 1)
		dst := make([]byte, len(src))
		b.Run(fmt.Sprintf("ts%d", ts), func(b *testing.B) {
			b.SetBytes(int64(len(src)))
			b.ReportAllocs()
			done := cpuMeter(b, len(src))
			for b.Loop() {
				unshuffleSafe(dst, src, ts, len(src)/ts, 0)
			}
			done()
		})
	}
}

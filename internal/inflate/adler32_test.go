package inflate

import (
	stdadler "hash/adler32"
	"testing"
)

func TestAdler32(t *testing.T) {
	data := append(randomData(40000), make([]byte, 20000)...)
	for i := range 20000 {
		data = append(data, 255-byte(i>>14))
	}
	for _, n := range []int{0, 1, 15, 16, 17, 31, 5551, 5552, 5553, 11104, 65536, len(data)} {
		for _, off := range []int{0, 3} {
			p := data[off : off+min(n, len(data)-off)]
			if got, want := adler32(p), stdadler.Checksum(p); got != want {
				t.Errorf("%d bytes at %d: %#08x, want %#08x", len(p), off, got, want)
			}
		}
	}
}

// TestAdlerBlock checks the kernel against adlerBlockGo on every block
// size it takes, all-255 blocks (the largest sums) included.
func TestAdlerBlock(t *testing.T) {
	rnd := randomData(adlerNmax)
	full := make([]byte, adlerNmax)
	for i := range full {
		full[i] = 255
	}
	for n := 32; n <= adlerNmax&^31; n += 32 {
		for _, p := range [][]byte{rnd[:n], full[:n]} {
			s, w := adlerBlock(p)
			ws, ww := adlerBlockGo(p)
			if s != ws || w != ww {
				t.Fatalf("%d bytes: (%d, %d), want (%d, %d)", n, s, w, ws, ww)
			}
		}
	}
}

// FuzzAdler32 checks adler32 (with the kernel, if any) against
// hash/adler32 and the kernel against adlerBlockGo.
func FuzzAdler32(f *testing.F) {
	f.Add([]byte("Wikipedia"))
	f.Add(randomData(100))
	f.Fuzz(func(t *testing.T, p []byte) {
		if got, want := adler32(p), stdadler.Checksum(p); got != want {
			t.Fatalf("adler32 %#08x, want %#08x", got, want)
		}
		q := p[:min(len(p), adlerNmax)&^31]
		s, w := adlerBlock(q)
		if ws, ww := adlerBlockGo(q); s != ws || w != ww {
			t.Fatalf("adlerBlock (%d, %d), want (%d, %d)", s, w, ws, ww)
		}
	})
}

func BenchmarkAdler32(b *testing.B) {
	p := randomData(1 << 20)
	loopCPU(b, len(p), func() { adler32(p) })
}

func BenchmarkAdler32Std(b *testing.B) {
	p := randomData(1 << 20)
	loopCPU(b, len(p), func() { stdadler.Checksum(p) })
}

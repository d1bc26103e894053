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

func BenchmarkAdler32(b *testing.B) {
	p := randomData(1 << 20)
	loopCPU(b, len(p), func() { adler32(p) })
}

func BenchmarkAdler32Std(b *testing.B) {
	p := randomData(1 << 20)
	loopCPU(b, len(p), func() { stdadler.Checksum(p) })
}

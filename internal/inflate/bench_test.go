package inflate

import (
	"bytes"
	"compress/flate"
	"io"
	"testing"

	kflate "github.com/klauspost/compress/flate"
)

// field is a 512x512 float32 chunk like the benchmark's: a smooth
// function plus noise, quantised to 1/64.
func field() []byte { return floatData(512 * 512 * 4) }

// benchInputs are raw DEFLATE streams of benchmark-like data: the field
// at gzip levels 1 and 5 (klauspost, as the gzip codec writes it), text
// and random data.
func benchInputs(b *testing.B) []struct {
	name      string
	data, src []byte
} {
	kcompress := func(data []byte, level int) []byte {
		var buf bytes.Buffer
		w, _ := kflate.NewWriter(&buf, level)
		w.Write(data)
		w.Close()
		return buf.Bytes()
	}
	f, text, rnd := field(), textData(1<<20), randomData(1<<20)
	return []struct {
		name      string
		data, src []byte
	}{
		{"float-k1", f, kcompress(f, 1)},
		{"float-k5", f, kcompress(f, 5)},
		{"float-std6", f, compress(b, modeRaw, f, 6)},
		{"text-std6", text, compress(b, modeRaw, text, 6)},
		{"random-std6", rnd, compress(b, modeRaw, rnd, 6)},
	}
}

func BenchmarkRaw(b *testing.B) {
	for _, in := range benchInputs(b) {
		dst := make([]byte, 0, len(in.data))
		b.Run(in.name+"/inflate", func(b *testing.B) {
			b.SetBytes(int64(len(in.data)))
			for b.Loop() {
				if _, _, err := Raw(dst, in.src, len(in.data)); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(in.name+"/stdlib", func(b *testing.B) {
			b.SetBytes(int64(len(in.data)))
			br := bytes.NewReader(in.src)
			r := flate.NewReader(br)
			for b.Loop() {
				br.Reset(in.src)
				r.(flate.Resetter).Reset(br, nil)
				if _, err := io.ReadFull(r, dst[:len(in.data)]); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(in.name+"/klauspost", func(b *testing.B) {
			b.SetBytes(int64(len(in.data)))
			br := bytes.NewReader(in.src)
			r := kflate.NewReader(br)
			for b.Loop() {
				br.Reset(in.src)
				r.(kflate.Resetter).Reset(br, nil)
				if _, err := io.ReadFull(r, dst[:len(in.data)]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

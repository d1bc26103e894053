package blosc

import (
	"bytes"
	"testing"
)

// FuzzDecompress feeds arbitrary frames to Decompress, which must not
// panic, must respect the limit and the caller's buffer, and must agree with
// FrameInfo; frames that decode are re-encoded and must round-trip.
func FuzzDecompress(f *testing.F) {
	fs, all := loadCBloscFixtures(f)
	for i, fx := range fs {
		if fx.N > 0 && fx.N < 5000 && i%9 == 0 {
			f.Add(all[fx.Offset:fx.Offset+fx.Length], fx.N)
		}
	}
	src := genData(3000, 4, 1)
	for _, cname := range cnames {
		for _, sh := range []Shuffle{NoShuffle, ByteShuffle, BitShuffle} {
			frame, err := Compress(nil, src, Options{Cname: cname, Clevel: 5, Shuffle: sh, Typesize: 4, Blocksize: 1024})
			if err != nil {
				f.Fatal(err)
			}
			f.Add(frame, len(src))
		}
	}
	f.Fuzz(func(t *testing.T, frame []byte, limit int) {
		limit %= 1 << 20
		nb, cb, _, ts, flags, infoErr := FrameInfo(frame)
		prefix := []byte{1, 2, 3}
		buf := make([]byte, 3, 3+max(limit, 0))
		copy(buf, prefix)
		out, err := Decompress(buf, frame, limit)
		if !bytes.Equal(out[:3], prefix) {
			t.Fatal("prefix of dst changed")
		}
		if err != nil {
			return
		}
		if infoErr != nil {
			t.Fatalf("Decompress succeeded, FrameInfo failed: %v", infoErr)
		}
		if len(out)-3 != nb || (limit >= 0 && nb > limit) {
			t.Fatalf("decoded %d bytes, header %d, limit %d", len(out)-3, nb, limit)
		}
		if cb > len(frame) {
			t.Fatalf("cbytes %d > %d", cb, len(frame))
		}
		if nb > 0 && limit >= nb && &out[0] != &buf[0] {
			t.Fatal("did not decode into the caller's buffer")
		}
		// Re-encode what decoded, with the frame's own parameters.
		sh := NoShuffle
		if flags&FlagShuffle != 0 {
			sh = ByteShuffle
		} else if flags&FlagBitShuffle != 0 {
			sh = BitShuffle
		}
		data := out[3:]
		re, err := Compress(nil, data, Options{Cname: LZ4, Clevel: 1, Shuffle: sh, Typesize: ts})
		if err != nil {
			t.Fatal(err)
		}
		back, err := Decompress(nil, re, len(data))
		if err != nil || !bytes.Equal(back, data) {
			t.Fatalf("re-encoded frame does not round-trip: %v", err)
		}
	})
}

// FuzzBloscLZ round-trips arbitrary data through the blosclz encoder at
// every level and feeds arbitrary streams to the decoder, which must stay
// within its buffers.
func FuzzBloscLZ(f *testing.F) {
	f.Add(genData(2000, 2, 5), 5)
	f.Add(bytes.Repeat([]byte("abcabcabd"), 300), 9)
	f.Add([]byte("\x1fhello world, hello world, hello world!!"), 1)
	f.Fuzz(func(t *testing.T, data []byte, level int) {
		out := make([]byte, len(data)+8)
		blosclzDecode(out, data) // arbitrary stream: must not panic
		level = 1 + (level%9+9)%9
		comp := make([]byte, len(data))
		n := blosclzCompress(level, data, comp, level%2 == 0)
		if n == 0 {
			return
		}
		got := make([]byte, len(data))
		m, ok := blosclzDecode(got, comp[:n])
		if !ok || m != len(data) || !bytes.Equal(got, data) {
			t.Fatalf("level %d: round trip failed (ok %v, %d of %d bytes)", level, ok, m, len(data))
		}
	})
}

package zfp

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func refStream(t testing.TB, name string) []byte {
	b, err := os.ReadFile(filepath.Join(refDir, "enc", name+".zfp"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestTruncated cuts reference streams at every length: each prefix is
// ErrCorrupt (zfpy's streams end in their last bit, so none decodes).
func TestTruncated(t *testing.T) {
	for _, name := range []string{"f4_3d_rev", "f8_1d_tol0.001", "i8_4d_prec20", "f8_4d_rate16", "i4_2d_rate8", "f8_special_rev"} {
		enc := refStream(t, name)
		h, err := ReadHeader(enc)
		if err != nil {
			t.Fatal(err)
		}
		dst := make([]byte, h.NumElements()*h.Type.Size())
		for n := 0; n < len(enc); n++ {
			if _, err := Decompress(dst, enc[:n]); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("%s cut to %d of %d bytes: %v, want ErrCorrupt", name, n, len(enc), err)
			}
		}
		if _, err := Decompress(dst, enc); err != nil {
			t.Fatal(err)
		}
	}
}

// header builds a full header with raw fields.
func header(meta uint64, mode uint64, long bool) []byte {
	var w bitWriter
	w.writeBits('z'|'f'<<8|'p'<<16|codecVersion<<24, 32)
	w.writeBits(meta, 52)
	if long {
		w.writeBits(mode, 64)
	} else {
		w.writeBits(mode, 12)
	}
	w.pad(256)
	return w.finish()
}

func TestHostileHeaders(t *testing.T) {
	dst := make([]byte, 64)
	cases := map[string][]byte{
		"empty":      nil,
		"bad magic":  []byte("zfq\x05\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"),
		"version 4":  []byte("zfp\x04\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"),
		"magic only": []byte("zfp\x05"),
		// 1-D, float, 2^32 values: the chunk is 16 floats.
		"2^32 values": header((1<<32-1)<<4|0<<2|2, 2048+128, false),
		// 4-D, double, 4096^4 values.
		"4096^4 values": header((1<<48-1)<<4|3<<2|3, 2048+128, false),
		// Long mode word with minbits > maxbits.
		"minbits > maxbits": header(15<<4|2, 0xfff|(100<<12)|(5<<27)|(63<<42)|(1074<<49), true),
		// Type int32 where the caller expects 16 floats of 4 bytes: the
		// size matches, the codec (not Decompress) refuses the type.
	}
	for name, src := range cases {
		if _, err := Decompress(dst, src); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: %v, want ErrCorrupt", name, err)
		}
	}
	// A long mode word is read in full: maxprec 0 cannot be written (it
	// is stored minus one), so every long word with minbits <= maxbits is
	// valid; check one decodes.
	ok := header(15<<4|2, 0xfff|(0<<12)|(100<<27)|(63<<42)|(1074<<49), true)
	if _, err := Decompress(dst, ok); err != nil {
		t.Errorf("valid long mode: %v", err)
	}
}

// TestDecodeAllocations: decoding allocates only the header's shape,
// whatever the stream claims.
func TestDecodeAllocations(t *testing.T) {
	enc := refStream(t, "f8_3d_tol0.001")
	h, _ := ReadHeader(enc)
	dst := make([]byte, h.NumElements()*8)
	if n := testing.AllocsPerRun(20, func() { Decompress(dst, enc) }); n > 1 {
		t.Errorf("%v allocations per decode", n)
	}
}

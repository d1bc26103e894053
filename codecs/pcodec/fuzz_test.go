package pcodec

import (
	"bytes"
	"testing"
)

// FuzzDecompress feeds arbitrary streams to the decoder: it must return
// an error or numbers, never panic, hang or allocate past its bounds; what
// it decodes must survive a round trip through the encoder.
func FuzzDecompress(f *testing.F) {
	for name, c := range compatCases() {
		src, err := readTestdata("pco", name)
		if err == nil && len(src) < 4096 {
			f.Add(src, byte(c.t), uint16(len(c.want)/int(c.t.Bits()/8)))
		}
	}
	f.Fuzz(func(t *testing.T, src []byte, typ byte, n uint16) {
		nt := NumberType(typ%11 + 1)
		dst := make([]byte, int(n)*int(nt.Bits()/8))
		if err := Decompress(dst, src, nt); err != nil {
			return
		}
		enc, err := Compress(nil, dst, nt, DefaultEncodeOptions())
		if err != nil {
			t.Fatal(err)
		}
		got := make([]byte, len(dst))
		if err := Decompress(got, enc, nt); err != nil || !bytes.Equal(got, dst) {
			t.Fatalf("round trip of decoded numbers: %v", err)
		}
	})
}

// FuzzRoundTrip encodes arbitrary numbers with arbitrary options and
// decodes them back exactly.
func FuzzRoundTrip(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8}, byte(5), byte(8), int8(-1), uint16(300))
	f.Add(bytes.Repeat([]byte{0xff, 0, 0x80}, 500), byte(0), byte(12), int8(7), uint16(1))
	f.Add(bytes.Repeat([]byte{9, 0, 7, 0, 9, 0, 200, 1}, 300), byte(6), byte(13*3+8), int8(-1), uint16(5))   // u16 dict + conv1
	f.Add(bytes.Repeat([]byte{1, 2, 3, 4, 100, 2, 3, 4}, 400), byte(2), byte(13*12+8), int8(2), uint16(999)) // i32 lookback + secondary delta
	f.Fuzz(func(t *testing.T, src []byte, typ, level byte, order int8, pageN uint16) {
		nt := NumberType(typ%11 + 1)
		src = src[:len(src)/int(nt.Bits()/8)*int(nt.Bits()/8)]
		o := EncodeOptions{Level: int(level % 13), DeltaOrder: int(order%9) - 1, PageN: int(pageN) + 1}
		if o.DeltaOrder < -1 {
			o.DeltaOrder = -1
		}
		// level/13 picks the other options: dict mode, conv1, lookback,
		// secondary delta
		flags := level / 13
		o.Dict = flags&1 != 0
		if flags&2 != 0 && nt.Bits() < 64 {
			o.Conv1 = 1 + int(pageN%7)
		}
		o.Lookback, o.SecondaryDelta = flags&4 != 0, flags&8 != 0
		enc, err := Compress(nil, src, nt, o)
		if err != nil {
			t.Fatal(err)
		}
		got := make([]byte, len(src))
		if err := Decompress(got, enc, nt); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, src) {
			t.Fatal("round trip differs")
		}
	})
}

package codecs

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/klauspost/compress/zstd"
)

func TestZstdLevels(t *testing.T) {
	tests := []struct {
		level int
		want  zstd.EncoderLevel
	}{
		{-131072, zstd.SpeedFastest}, {-3, zstd.SpeedFastest}, {-1, zstd.SpeedFastest},
		{0, zstd.SpeedDefault}, {1, zstd.SpeedFastest}, {2, zstd.SpeedFastest},
		{3, zstd.SpeedDefault}, {5, zstd.SpeedDefault}, {6, zstd.SpeedBetterCompression},
		{9, zstd.SpeedBetterCompression}, {10, zstd.SpeedBestCompression}, {22, zstd.SpeedBestCompression},
	}
	for _, tc := range tests {
		if got := zstdEncoderLevel(tc.level); got != tc.want {
			t.Errorf("level %d: %v, want %v", tc.level, got, tc.want)
		}
	}
	for _, bad := range []int{23, -131073} {
		if err := must(NewZstd(bad, false)).CheckEncode(); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("level %d: %v", bad, err)
		}
	}
}

func TestZstdFrames(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 18))
	a, b := randomBytes(r, 300000), randomBytes(r, 777)
	for _, checksum := range []bool{false, true} {
		z := must(NewZstd(3, checksum))
		encA := must(z.Encode(nil, a))
		var h zstd.Header
		if err := h.Decode(encA); err != nil {
			t.Fatal(err)
		}
		if h.HasCheckSum != checksum || !h.HasFCS || h.FrameContentSize != uint64(len(a)) {
			t.Errorf("checksum %v: header %+v", checksum, h)
		}
		// Concatenated frames decode to the concatenation, even though the
		// first frame's size is all the decoder knows up front.
		two := append(must(z.Encode(nil, a)), must(z.Encode(nil, b))...)
		want := append(append([]byte(nil), a...), b...)
		got, err := z.Decode(nil, two, len(want))
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("two frames: %v", err)
		}
		if _, err := z.Decode(nil, two, len(want)-1); !errors.Is(err, ErrCorrupt) {
			t.Errorf("two frames over limit: %v", err)
		}
	}
	z := must(NewZstd(1, false))
	encA := must(z.Encode(nil, a))
	// Into dst's free capacity, after its contents.
	dst := make([]byte, 2, 2+len(a)+100)
	copy(dst, "hi")
	got, err := z.Decode(dst, encA, len(a))
	if err != nil || string(got[:2]) != "hi" || !bytes.Equal(got[2:], a) {
		t.Fatalf("append: %v", err)
	}
	if unsafe.SliceData(got) != unsafe.SliceData(dst) {
		t.Error("decoded into new memory although dst had room")
	}
	// A skippable frame before the data is ignored.
	skip := binary.LittleEndian.AppendUint32(nil, 0x184D2A50)
	skip = binary.LittleEndian.AppendUint32(skip, 3)
	skip = append(skip, 1, 2, 3)
	got, err = z.Decode(nil, append(skip, encA...), len(a))
	if err != nil || !bytes.Equal(got, a) {
		t.Fatalf("skippable frame: %v", err)
	}
	// A frame without a content size (streamed) decodes within the limit.
	stream := streamedZstd(t, a)
	if err := h0(stream); err != nil {
		t.Fatal(err)
	}
	got, err = z.Decode(nil, stream, len(a))
	if err != nil || !bytes.Equal(got, a) {
		t.Fatalf("streamed frame: %v", err)
	}
	// An empty chunk is one frame, as libzstd writes it.
	e := must(z.Encode(nil, nil))
	if len(e) == 0 {
		t.Fatal("empty input encoded to no frame")
	}
	if got, err := z.Decode(nil, e, 0); err != nil || len(got) != 0 {
		t.Errorf("empty: %q %v", got, err)
	}
}

// streamedZstd returns src as a zstd frame written by a streaming encoder,
// which does not declare the content size.
func streamedZstd(t testing.TB, src []byte) []byte {
	var buf bytes.Buffer
	w, err := zstd.NewWriter(&buf, zstd.WithEncoderConcurrency(1))
	if err != nil {
		t.Fatal(err)
	}
	w.Write(src)
	w.Close()
	return buf.Bytes()
}

// h0 checks that a frame has no content size.
func h0(frame []byte) error {
	var h zstd.Header
	if err := h.Decode(frame); err != nil {
		return err
	}
	if h.HasFCS {
		return errors.New("streamed frame declares its size")
	}
	return nil
}

// TestZstdBombs checks that frames decoding to more than the limit are
// refused without allocating their size: one declaring 1 GiB, and one
// without a declared size expanding to 8 MiB.
func TestZstdBombs(t *testing.T) {
	z := must(NewZstd(3, false))
	const limit = 256 << 10
	// Frame header: magic, descriptor 0xE0 (single segment, 8-byte content
	// size), content size 1 GiB; then one last RLE block of 128 KiB zeros.
	declared := binary.LittleEndian.AppendUint32(nil, 0xFD2FB528)
	declared = append(declared, 0xE0)
	declared = binary.LittleEndian.AppendUint64(declared, 1<<30)
	blk := uint32(1) | 1<<1 | (128<<10)<<3 // last, RLE, size
	declared = append(declared, byte(blk), byte(blk>>8), byte(blk>>16), 0)
	var err error
	n := allocatedDuring(func() { _, err = z.Decode(nil, declared, limit) })
	if !errors.Is(err, ErrCorrupt) {
		t.Fatalf("declared 1 GiB: %v", err)
	}
	if n > 64<<10 {
		t.Errorf("declared 1 GiB: allocated %d bytes before refusing", n)
	}
	stream := streamedZstd(t, make([]byte, 8<<20))
	if err := h0(stream); err != nil {
		t.Fatal(err)
	}
	n = allocatedDuring(func() { _, err = z.Decode(nil, stream, limit) })
	if !errors.Is(err, ErrCorrupt) {
		t.Fatalf("streamed 8 MiB: %v", err)
	}
	// The buffer of limit bytes, one growth of it by the block crossing the
	// limit, and the decoder's own block buffers: far below the 8 MiB.
	if n > 2*limit+1<<20 {
		t.Errorf("streamed 8 MiB: allocated %d bytes for a limit of %d", n, limit)
	}
	t.Logf("streamed 8 MiB bomb, limit %d: %d bytes allocated", limit, n)
	// A frame whose blocks produce more than its declared size.
	small := must(z.Encode(nil, make([]byte, 1000)))
	var h zstd.Header
	if err := h.Decode(small); err != nil || !h.HasFCS {
		t.Fatalf("header: %v %+v", err, h)
	}
	lie := append([]byte(nil), small...)
	// Descriptor byte 4; with a 1- or 2-byte size field right after it
	// (klauspost writes the smallest that fits) shrink the declared size.
	if lie[4]&0xC0 == 0x40 { // 2-byte field, value - 256
		binary.LittleEndian.PutUint16(lie[5:], 500-256)
		if _, err := z.Decode(nil, lie, limit); !errors.Is(err, ErrCorrupt) {
			t.Errorf("lying content size: %v", err)
		}
	} else {
		t.Logf("descriptor %#x: lying-size case skipped", lie[4])
	}
}

func TestZstdConfig(t *testing.T) {
	for _, tc := range []struct {
		js       string
		level    int
		checksum bool
	}{
		{`{"level":3,"checksum":true}`, 3, true},
		{`{"level":-5,"checksum":false}`, -5, false},
		{`{"level":19}`, 19, false},
		{``, 0, false},
	} {
		c, err := New(Spec{Name: "zstd", Configuration: []byte(tc.js)})
		if err != nil {
			t.Fatalf("%s: %v", tc.js, err)
		}
		z := c.(*Zstd)
		if z.Level() != tc.level || z.Checksum() != tc.checksum {
			t.Errorf("%s: level %d checksum %v", tc.js, z.Level(), z.Checksum())
		}
	}
}

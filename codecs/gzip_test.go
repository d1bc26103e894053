package codecs

import (
	"bytes"
	stdgzip "compress/gzip"
	"errors"
	"io"
	"math/rand/v2"
	"runtime"
	"testing"
	"unsafe"
)

// allocatedDuring returns the bytes the process allocated while fn ran.
func allocatedDuring(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

func TestGzipDecode(t *testing.T) {
	g := must(NewGzip(6))
	r := rand.New(rand.NewPCG(13, 14))
	a, b := randomBytes(r, 70000), randomBytes(r, 1234)
	encA, encB := g.mustEncode(a), g.mustEncode(b)
	ab := append(slices2(a), b...)

	// Multi-member streams decode to the concatenation, as gzip does.
	got, err := g.Decode(nil, append(slices2(encA), encB...), len(ab))
	if err != nil || !bytes.Equal(got, ab) {
		t.Fatalf("multi-member: %v, equal %v", err, bytes.Equal(got, ab))
	}
	// Exactly at the limit is fine, one byte over is not.
	if _, err := g.Decode(nil, encA, len(a)); err != nil {
		t.Errorf("at limit: %v", err)
	}
	if _, err := g.Decode(nil, encA, len(a)-1); !errors.Is(err, ErrCorrupt) {
		t.Errorf("over limit: %v", err)
	}
	if _, err := g.Decode(nil, append(slices2(encA), encB...), len(ab)-1); !errors.Is(err, ErrCorrupt) {
		t.Errorf("multi-member over limit: %v", err)
	}
	// Output goes into dst's free capacity, after what dst holds.
	dst := make([]byte, 3, 3+len(a))
	copy(dst, "abc")
	got, err = g.Decode(dst, encA, len(a))
	if err != nil || string(got[:3]) != "abc" || !bytes.Equal(got[3:], a) {
		t.Fatalf("append: %v", err)
	}
	if unsafe.SliceData(got) != unsafe.SliceData(dst) {
		t.Error("decoded into new memory although dst had room")
	}
	// Without room it grows, still appending.
	got, err = g.Decode([]byte("xy"), encB, len(b))
	if err != nil || string(got[:2]) != "xy" || !bytes.Equal(got[2:], b) {
		t.Fatalf("grow: %v", err)
	}
	// A lying ISIZE only changes the first guess of the size; the trailer
	// check then fails.
	lie := slices2(encA)
	lie[len(lie)-1] = 0x7f
	if _, err := g.Decode(nil, lie, len(a)); !errors.Is(err, ErrChecksum) {
		t.Errorf("lying ISIZE: %v", err)
	}
	// A negative limit refuses everything rather than panicking.
	for _, c := range []BytesToBytes{g, must(NewZstd(1, false)), NewCRC32C()} {
		if _, err := c.Decode(nil, must(c.Encode(nil, b)), -1); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s with limit -1: %v", c.Name(), err)
		}
	}
	// Empty input encodes to a valid stream that decodes to nothing.
	e := g.mustEncode(nil)
	if got, err := g.Decode(nil, e, 0); err != nil || len(got) != 0 {
		t.Errorf("empty: %q, %v", got, err)
	}
}

func slices2(b []byte) []byte { return append([]byte(nil), b...) }

// TestGzipInterop checks our streams against the standard library's both ways,
// and that encoding is deterministic with a zero modification time.
func TestGzipInterop(t *testing.T) {
	src := randomBytes(rand.New(rand.NewPCG(15, 16)), 50000)
	for level := 0; level <= 9; level++ {
		g := must(NewGzip(level))
		enc := g.mustEncode(src)
		if len(enc) > g.MaxEncodedSize(len(src)) {
			t.Errorf("level %d: %d bytes > MaxEncodedSize %d", level, len(enc), g.MaxEncodedSize(len(src)))
		}
		if !bytes.Equal(enc, g.mustEncode(src)) {
			t.Errorf("level %d: encoding is not deterministic", level)
		}
		if !bytes.Equal(enc[4:8], []byte{0, 0, 0, 0}) {
			t.Errorf("level %d: MTIME % x, want zero", level, enc[4:8])
		}
		zr, err := stdgzip.NewReader(bytes.NewReader(enc))
		if err != nil {
			t.Fatal(err)
		}
		std, err := io.ReadAll(zr)
		if err != nil || !bytes.Equal(std, src) {
			t.Fatalf("level %d: compress/gzip reads our stream: %v", level, err)
		}
		var buf bytes.Buffer
		zw, _ := stdgzip.NewWriterLevel(&buf, level)
		zw.Write(src)
		zw.Close()
		got, err := g.Decode(nil, buf.Bytes(), len(src))
		if err != nil || !bytes.Equal(got, src) {
			t.Fatalf("level %d: we read compress/gzip's stream: %v", level, err)
		}
	}
	// Incompressible data stays within the bound at every level.
	noise := make([]byte, 256<<10)
	for i := range noise {
		noise[i] = byte(rand.Uint32())
	}
	for _, level := range []int{0, 1, 9} {
		g := must(NewGzip(level))
		if n := len(g.mustEncode(noise)); n > g.MaxEncodedSize(len(noise)) {
			t.Errorf("noise level %d: %d > MaxEncodedSize %d", level, n, g.MaxEncodedSize(len(noise)))
		}
	}
}

// TestGzipBomb checks that a stream decoding to 8 MiB is refused with a
// 256 KiB limit without allocating much more than the limit.
func TestGzipBomb(t *testing.T) {
	g := must(NewGzip(1))
	bomb := g.mustEncode(make([]byte, 8<<20))
	const limit = 256 << 10
	var err error
	n := allocatedDuring(func() { _, err = g.Decode(nil, bomb, limit) })
	if !errors.Is(err, ErrCorrupt) {
		t.Fatalf("bomb: %v", err)
	}
	if n > 3*limit {
		t.Errorf("bomb decode allocated %d bytes for a limit of %d", n, limit)
	}
	t.Logf("8 MiB bomb, limit %d: %d bytes allocated", limit, n)
}

func TestGzipConfig(t *testing.T) {
	for _, tc := range []struct {
		js   string
		want int
	}{{`{"level":1}`, 1}, {`{"level":9}`, 9}, {`{"level":0}`, 0}, {``, DefaultGzipLevel}} {
		c, err := New(Spec{Name: "gzip", Configuration: []byte(tc.js)})
		if err != nil {
			t.Fatalf("%s: %v", tc.js, err)
		}
		if got := c.(*Gzip).Level(); got != tc.want {
			t.Errorf("%s: level %d, want %d", tc.js, got, tc.want)
		}
	}
}

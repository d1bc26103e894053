package codecs

import (
	"bytes"
	stdgzip "compress/gzip"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"testing"
	"testing/iotest"
	"unsafe"

	"github.com/klauspost/compress/gzip"
)

// stallReader returns (0, nil) forever.
type stallReader struct{}

func (stallReader) Read([]byte) (int, error) { return 0, nil }

func TestReadLimited(t *testing.T) {
	data := randomBytes(rand.New(rand.NewPCG(3, 4)), 10000)
	errBoom := errors.New("boom")
	tests := []struct {
		name         string
		dst          []byte
		r            func() io.Reader
		limit, guess int
		want         []byte // appended to dst; nil with wantErr
		wantErr      error
	}{
		{"exact limit", nil, func() io.Reader { return bytes.NewReader(data) }, len(data), 0, data, nil},
		{"exact limit, exact guess", nil, func() io.Reader { return bytes.NewReader(data) }, len(data), len(data), data, nil},
		{"under limit", nil, func() io.Reader { return bytes.NewReader(data) }, 2 * len(data), 100, data, nil},
		{"guess above limit", nil, func() io.Reader { return bytes.NewReader(data) }, len(data), math.MaxInt, data, nil},
		{"negative guess", nil, func() io.Reader { return bytes.NewReader(data) }, len(data), -5, data, nil},
		{"one byte reads", []byte("ab"), func() io.Reader { return iotest.OneByteReader(bytes.NewReader(data[:300])) }, 300, 7, data[:300], nil},
		{"data with EOF", nil, func() io.Reader { return iotest.DataErrReader(bytes.NewReader(data[:50])) }, 50, 50, data[:50], nil},
		{"empty", []byte("x"), func() io.Reader { return bytes.NewReader(nil) }, 10, 10, []byte{}, nil},
		{"empty, zero limit", nil, func() io.Reader { return bytes.NewReader(nil) }, 0, 0, []byte{}, nil},
		{"empty, negative limit", nil, func() io.Reader { return bytes.NewReader(nil) }, -1, 0, []byte{}, nil},
		{"one over", nil, func() io.Reader { return bytes.NewReader(data) }, len(data) - 1, len(data), nil, ErrCorrupt},
		{"over, zero limit", nil, func() io.Reader { return bytes.NewReader(data[:1]) }, 0, 0, nil, ErrCorrupt},
		{"reader error", []byte("x"), func() io.Reader { return iotest.ErrReader(errBoom) }, 10, 10, nil, errBoom},
		{"reader error after data", nil, func() io.Reader {
			return io.MultiReader(bytes.NewReader(data[:5000]), iotest.ErrReader(errBoom))
		}, len(data), 100, nil, errBoom},
		{"reader error at the limit", nil, func() io.Reader {
			return io.MultiReader(bytes.NewReader(data[:100]), iotest.ErrReader(errBoom))
		}, 100, 100, nil, errBoom},
		{"no progress", nil, func() io.Reader { return stallReader{} }, 10, 10, nil, io.ErrNoProgress},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ReadLimited(tc.dst, tc.r(), tc.limit, tc.guess)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("error %v, want %v", err, tc.wantErr)
				}
				if !bytes.Equal(got, tc.dst) {
					t.Fatalf("on error got %q, want dst %q back", got, tc.dst)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := append(append([]byte{}, tc.dst...), tc.want...)
			if !bytes.Equal(got, want) {
				t.Fatalf("got %d bytes, want %d", len(got), len(want))
			}
			if c := cap(got); c > len(tc.dst)+max(tc.limit, 0) && c > cap(tc.dst) {
				t.Errorf("cap %d beyond len(dst)+limit %d", c, len(tc.dst)+tc.limit)
			}
		})
	}
}

func TestReadLimitedIntoCapacity(t *testing.T) {
	data := []byte("0123456789")
	dst := make([]byte, 2, 20)
	copy(dst, "ab")
	got, err := ReadLimited(dst, bytes.NewReader(data), 100, 0)
	if err != nil || string(got) != "ab0123456789" {
		t.Fatalf("got %q, %v", got, err)
	}
	if unsafe.SliceData(got) != unsafe.SliceData(dst) {
		t.Error("read into new memory although dst had room")
	}
	// Free capacity beyond the limit is not written past the limit.
	dst = make([]byte, 0, 20)
	if _, err := ReadLimited(dst, bytes.NewReader(data), 4, 0); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("over limit with room in dst: %v", err)
	}
	if got := dst[:20]; !bytes.Equal(got[4:], make([]byte, 16)) {
		t.Errorf("wrote beyond the limit into dst: %q", got)
	}
}

func TestWriterPool(t *testing.T) {
	var pool WriterPool[*gzip.Writer]
	newW := func(w io.Writer) (*gzip.Writer, error) { return gzip.NewWriterLevel(w, 5) }
	r := rand.New(rand.NewPCG(5, 6))
	for i, n := range []int{0, 1, 1000, 70000, 3} {
		src := randomBytes(r, n)
		prefix := []byte{byte(i), 'p'}
		out, err := pool.Append(prefix, src, newW)
		if err != nil {
			t.Fatalf("%d bytes: %v", n, err)
		}
		if !bytes.Equal(out[:2], prefix) {
			t.Fatalf("%d bytes: prefix %q changed", n, out[:2])
		}
		zr, err := stdgzip.NewReader(bytes.NewReader(out[2:]))
		if err != nil {
			t.Fatalf("%d bytes: %v", n, err)
		}
		got, err := io.ReadAll(zr)
		if err != nil || !bytes.Equal(got, src) {
			t.Fatalf("%d bytes: round trip %v, equal %v", n, err, bytes.Equal(got, src))
		}
	}
	// A failing constructor's error comes back unchanged, with dst.
	errBad := errors.New("bad level")
	var fresh WriterPool[*gzip.Writer]
	out, err := fresh.Append([]byte("d"), []byte("x"), func(io.Writer) (*gzip.Writer, error) { return nil, errBad })
	if !errors.Is(err, errBad) || string(out) != "d" {
		t.Errorf("constructor error: %q, %v", out, err)
	}
}

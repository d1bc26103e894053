package objstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/gozarr/gozarr/store"
)

func TestCheckContentRange(t *testing.T) {
	tests := []struct {
		cr   string
		r    store.ByteRange
		n    int
		fail bool
	}{
		{"bytes 2-4/10", store.OffsetLen(2, 3), 3, false},
		{"bytes 2-4/*", store.OffsetLen(2, 3), 3, false},
		{"bytes 2-4/5", store.OffsetLen(2, 10), 3, false}, // clamped at the end
		{"bytes 7-9/10", store.Suffix(3), 3, false},
		{"bytes 0-2/3", store.Suffix(10), 3, false}, // suffix longer than the value
		{"bytes 5-9/10", store.From(5), 5, false},
		{"bytes 0-9/10", store.Full(), 10, false},
		{"anything", store.OffsetLen(0, 5), 0, false}, // empty answers are not checked
		{"", store.OffsetLen(0, 5), 5, true},
		{"items 0-4/10", store.OffsetLen(0, 5), 5, true},
		{"bytes 0-4", store.OffsetLen(0, 5), 5, true},
		{"bytes 04/10", store.OffsetLen(0, 5), 5, true},
		{"bytes a-4/10", store.OffsetLen(0, 5), 5, true},
		{"bytes 4-0/10", store.OffsetLen(0, 5), 5, true},
		{"bytes 0-99999999999999999999/1", store.OffsetLen(0, 5), 5, true},
		{"bytes 0-4/10", store.OffsetLen(0, 5), 4, true},  // length disagrees with the body
		{"bytes 1-5/10", store.OffsetLen(0, 5), 5, true},  // wrong start
		{"bytes 0-5/10", store.OffsetLen(0, 5), 6, true},  // more than asked for
		{"bytes 0-4/4", store.OffsetLen(0, 5), 5, true},   // last byte past total
		{"bytes 6-9/10", store.Suffix(3), 4, true},        // longer than the suffix
		{"bytes 6-8/10", store.Suffix(3), 3, true},        // not the end of the value
		{"bytes 4-8/10", store.From(5), 5, true},          // wrong start
		{"bytes 1-9/10", store.Full(), 9, true},           // a store.Full read starts at 0
		{"bytes 0-2/10", store.OffsetLen(-1, 3), 3, true}, // invalid range never matches
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%s %v %d", tc.cr, tc.r, tc.n), func(t *testing.T) {
			err := checkContentRange(tc.cr, tc.r, tc.n)
			if tc.fail != (err != nil) {
				t.Fatalf("err = %v, want failure %v", err, tc.fail)
			}
			if err != nil && !errors.Is(err, store.ErrBadContentRange) {
				t.Fatalf("err = %v, not store.ErrBadContentRange", err)
			}
		})
	}
}

// FuzzCheckContentRange checks that whatever CheckContentRange accepts for
// a non-empty answer describes exactly the bytes the range asks for.
func FuzzCheckContentRange(f *testing.F) {
	f.Add("bytes 2-4/10", uint8(1), int64(2), int64(3), 3)
	f.Add("bytes 7-9/10", uint8(3), int64(0), int64(3), 3)
	f.Add("bytes 5-9/*", uint8(2), int64(5), int64(0), 5)
	f.Add("bytes 0-99999999999999999999/1", uint8(0), int64(0), int64(0), 2)
	f.Fuzz(func(t *testing.T, cr string, kind uint8, off, n int64, got int) {
		r := [...]store.ByteRange{store.Full(), store.OffsetLen(off, n), store.From(off), store.Suffix(n)}[kind%4]
		if checkContentRange(cr, r, got) != nil || got <= 0 {
			return
		}
		rng, _, _ := strings.Cut(strings.TrimPrefix(cr, "bytes "), "/")
		firstStr, lastStr, _ := strings.Cut(rng, "-")
		first, err1 := strconv.ParseInt(firstStr, 10, 64)
		last, err2 := strconv.ParseInt(lastStr, 10, 64)
		if !strings.HasPrefix(cr, "bytes ") || err1 != nil || err2 != nil {
			t.Fatalf("accepted %q, which does not parse", cr)
		}
		if last-first+1 != int64(got) {
			t.Fatalf("accepted %q for %d bytes", cr, got)
		}
		if o, l, ok := r.Bounded(); ok && (first != o || int64(got) > l) {
			t.Fatalf("accepted %q for %v", cr, r)
		}
		if l, ok := r.IsSuffix(); ok && int64(got) > l {
			t.Fatalf("accepted %q for %v", cr, r)
		}
	})
}

func TestRequestRange(t *testing.T) {
	tests := []struct {
		in    store.ByteRange
		want  store.ByteRange
		empty bool
	}{
		{store.Full(), store.Full(), false},
		{store.From(0), store.Full(), false},
		{store.From(3), store.From(3), false},
		{store.OffsetLen(5, 0), store.OffsetLen(5, 0), true},
		{store.OffsetLen(0, 0), store.OffsetLen(0, 0), true},
		{store.OffsetLen(5, 1), store.OffsetLen(5, 1), false},
		{store.Suffix(0), store.Suffix(0), true},
		{store.Suffix(2), store.Suffix(2), false},
	}
	for _, tc := range tests {
		got, empty := requestRange(tc.in)
		if got != tc.want || empty != tc.empty {
			t.Errorf("requestRange(%v) = %v, %v; want %v, %v", tc.in, got, empty, tc.want, tc.empty)
		}
	}
}

func TestSliceWhole(t *testing.T) {
	b := []byte("0123456789")
	tests := []struct {
		r    store.ByteRange
		want string
	}{
		{store.Full(), "0123456789"},
		{store.OffsetLen(2, 3), "234"},
		{store.OffsetLen(8, 100), "89"},
		{store.OffsetLen(20, 5), ""},
		{store.From(7), "789"},
		{store.Suffix(3), "789"},
		{store.Suffix(30), "0123456789"},
	}
	for _, tc := range tests {
		got, err := sliceWhole(b, tc.r)
		if err != nil || string(got) != tc.want {
			t.Errorf("sliceWhole(%v) = %q, %v; want %q", tc.r, got, err, tc.want)
		}
		if got == nil || len(got) != cap(got) {
			t.Errorf("sliceWhole(%v): nil %v, spare capacity %d", tc.r, got == nil, cap(got)-len(got))
		}
	}
	if _, err := sliceWhole(b, store.OffsetLen(-1, 2)); !errors.Is(err, store.ErrInvalidRange) {
		t.Errorf("negative range: %v", err)
	}
}

func TestReadBody(t *testing.T) {
	data := bytes.Repeat([]byte("abcdefgh"), 1000)
	tests := []struct {
		name    string
		body    io.Reader
		size    int64
		limit   int64
		want    []byte
		more    bool
		wantErr error
	}{
		{"sized", bytes.NewReader(data), int64(len(data)), -1, data, false, nil},
		{"unknown size", iotest.HalfReader(bytes.NewReader(data)), -1, -1, data, false, nil},
		{"size beyond the trusted cap", bytes.NewReader(data), maxPrealloc + 1, -1, data, false, io.ErrUnexpectedEOF},
		{"short body", bytes.NewReader(data[:10]), 20, -1, nil, false, io.ErrUnexpectedEOF},
		{"empty sized", bytes.NewReader(nil), 0, 10, []byte{}, false, nil},
		{"empty unknown", bytes.NewReader(nil), -1, -1, []byte{}, false, nil},
		{"broken", iotest.ErrReader(io.ErrClosedPipe), -1, 10, nil, false, io.ErrClosedPipe},
		{"announced longer than the limit", bytes.NewReader(data), int64(len(data)), 5, data[:5], true, nil},
		{"unknown, one byte too many", bytes.NewReader(data), -1, int64(len(data)) - 1, data[:len(data)-1], true, nil},
		{"unknown, exactly the limit", bytes.NewReader(data), -1, int64(len(data)), data, false, nil},
		{"huge limit", bytes.NewReader(data), -1, 1 << 40, data, false, nil},
		{"longer than announced", bytes.NewReader(data), 5, 5, data[:5], true, nil},
		{"announced, within the limit", bytes.NewReader(data), int64(len(data)), 1 << 20, data, false, nil},
	}
	for _, tc := range tests {
		r := &countingReader{r: tc.body}
		got, more, err := readBody(r, tc.size, tc.limit)
		if !errors.Is(err, tc.wantErr) {
			t.Errorf("%s: err = %v, want %v", tc.name, err, tc.wantErr)
			continue
		}
		if tc.wantErr == nil && (got == nil || !bytes.Equal(got, tc.want) || more != tc.more) {
			t.Errorf("%s: got %d bytes (nil %v), more %v; want %d, %v", tc.name, len(got), got == nil, more, len(tc.want), tc.more)
		}
		if tc.limit >= 0 && r.n > tc.limit+1 {
			t.Errorf("%s: read %d bytes of the body for limit %d", tc.name, r.n, tc.limit)
		}
	}
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

func TestLimiter(t *testing.T) {
	l := newLimiter(2)
	ctx := context.Background()
	if err := l.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	if err := l.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	full, cancel := context.WithCancel(ctx)
	cancel()
	if err := l.Acquire(full); !errors.Is(err, context.Canceled) {
		t.Errorf("Acquire on a full limiter with a done context: %v", err)
	}
	l.Release()
	if err := l.Acquire(full); !errors.Is(err, context.Canceled) {
		t.Errorf("Acquire with a done context and a free slot: %v, want context.Canceled", err)
	}
	if l.Slots() != 2 || newLimiter(0).Slots() != 1 {
		t.Errorf("Slots = %d, %d", l.Slots(), newLimiter(0).Slots())
	}
}

func TestNormalizePrefix(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", ""}, {"/", ""}, {"a", "a/"}, {"/a/b/", "a/b/"},
	} {
		if got, err := normalizePrefix(tc.in); err != nil || got != tc.want {
			t.Errorf("normalizePrefix(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"a//b", "../x", "a/./b"} {
		if _, err := normalizePrefix(bad); !errors.Is(err, store.ErrInvalidKey) {
			t.Errorf("normalizePrefix(%q): err = %v, want ErrInvalidKey", bad, err)
		}
	}
}

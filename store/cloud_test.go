package store_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/gozarr/gozarr/store"
)

func TestLimiter(t *testing.T) {
	l := store.NewLimiter(2)
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
	if l.Slots() != 2 || store.NewLimiter(0).Slots() != 1 {
		t.Errorf("Slots = %d, %d", l.Slots(), store.NewLimiter(0).Slots())
	}
}

func TestNormalizePrefix(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", ""}, {"/", ""}, {"a", "a/"}, {"/a/b/", "a/b/"},
	} {
		if got, err := store.NormalizePrefix(tc.in); err != nil || got != tc.want {
			t.Errorf("NormalizePrefix(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"a//b", "../x", "a/./b"} {
		if _, err := store.NormalizePrefix(bad); !errors.Is(err, store.ErrInvalidKey) {
			t.Errorf("NormalizePrefix(%q): err = %v, want ErrInvalidKey", bad, err)
		}
	}
}

func TestReadAtMost(t *testing.T) {
	body := strings.Repeat("x", 100)
	for _, tc := range []struct {
		size, limit int64
		want        int
		ok          bool
	}{
		{100, -1, 100, true},
		{-1, -1, 100, true},
		{5, 5, 0, false},     // more than asked for
		{-1, 99, 0, false},   // one byte too many
		{-1, 100, 100, true}, // exactly
		{-1, 1 << 40, 100, true},
	} {
		r := &countingReader{r: strings.NewReader(body)}
		got, err := store.ReadAtMost(r, tc.size, tc.limit)
		if (err == nil) != tc.ok || len(got) != tc.want {
			t.Errorf("ReadAtMost(size %d, limit %d) = %d bytes, %v", tc.size, tc.limit, len(got), err)
		}
		if tc.limit >= 0 && r.n > tc.limit+1 {
			t.Errorf("ReadAtMost(limit %d) read %d bytes of the body", tc.limit, r.n)
		}
	}
	if _, err := store.ReadAtMost(iotest.ErrReader(errors.New("broken")), -1, 10); err == nil {
		t.Error("ReadAtMost of a broken body: no error")
	}
	if got, err := store.ReadAtMost(bytes.NewReader(nil), 0, 10); err != nil || got == nil || len(got) != 0 {
		t.Errorf("ReadAtMost of an empty body = %v, %v; want empty, non-nil", got, err)
	}
}

type countingReader struct {
	r *strings.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

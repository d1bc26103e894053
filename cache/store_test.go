package cache

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/mem"
)

// countingReader counts the calls that reach the inner store; it only
// reads.
type countingReader struct {
	r            store.Reader
	gets, ranges atomic.Int32
}

func (c *countingReader) Get(ctx context.Context, key string, br store.ByteRange) ([]byte, error) {
	c.gets.Add(1)
	return c.r.Get(ctx, key, br)
}

func (c *countingReader) GetRanges(ctx context.Context, key string, rs []store.ByteRange) ([][]byte, error) {
	c.ranges.Add(1)
	return store.GetRanges(ctx, c.r, key, rs)
}

func TestStoreCachesGets(t *testing.T) {
	ctx := context.Background()
	m := mem.New()
	m.Set(ctx, "a/c/0", []byte("0123456789"))
	cr := &countingReader{r: m}
	s := NewStore(cr, NewLRU(1<<20))
	if _, ok := s.(store.Writer); ok {
		t.Error("read-only inner store, writable wrapper")
	}
	for _, tc := range []struct {
		br   store.ByteRange
		want string
	}{{store.Full(), "0123456789"}, {store.OffsetLen(2, 3), "234"}, {store.Suffix(4), "6789"}, {store.From(8), "89"}} {
		for range 3 {
			got, err := s.Get(ctx, "a/c/0", tc.br)
			if err != nil || string(got) != tc.want {
				t.Fatalf("%v: %q, %v", tc.br, got, err)
			}
			got[0] = 'X' // the caller owns its slice
		}
	}
	if n := cr.gets.Load(); n != 4 {
		t.Errorf("%d inner gets, want 4", n)
	}
	// Missing keys are not cached.
	for range 2 {
		if _, err := s.Get(ctx, "nope", store.Full()); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("missing key: %v", err)
		}
	}
	if n := cr.gets.Load(); n != 6 {
		t.Errorf("%d inner gets, want 6", n)
	}
	// GetRanges serves cached ranges and fetches the rest in one call.
	got, err := s.(store.RangesReader).GetRanges(ctx, "a/c/0", []store.ByteRange{store.OffsetLen(2, 3), store.OffsetLen(0, 1), store.Suffix(4)})
	if err != nil || string(got[0]) != "234" || string(got[1]) != "0" || string(got[2]) != "6789" {
		t.Fatalf("GetRanges %q, %v", got, err)
	}
	if cr.ranges.Load() != 1 {
		t.Errorf("%d inner GetRanges, want 1", cr.ranges.Load())
	}
	got, _ = s.(store.RangesReader).GetRanges(ctx, "a/c/0", []store.ByteRange{store.OffsetLen(0, 1)})
	if string(got[0]) != "0" || cr.ranges.Load() != 1 {
		t.Errorf("cached range refetched")
	}
	if _, err := s.Get(ctx, "a/c/0", store.OffsetLen(-1, 2)); !errors.Is(err, store.ErrInvalidRange) {
		t.Errorf("bad range: %v", err)
	}
}

func TestStoreInvalidatesOnWrite(t *testing.T) {
	ctx := context.Background()
	m := mem.New()
	s := NewStore(m, NewLRU(1<<20))
	st, ok := s.(store.Store)
	if !ok {
		t.Fatalf("%T does not pass writes and listings through", s)
	}
	st.Set(ctx, "k", []byte("old"))
	if v, _ := st.Get(ctx, "k", store.Full()); string(v) != "old" {
		t.Fatalf("got %q", v)
	}
	st.Set(ctx, "k", []byte("new"))
	if v, _ := st.Get(ctx, "k", store.Full()); string(v) != "new" {
		t.Errorf("after Set: %q", v)
	}
	st.Delete(ctx, "k")
	if _, err := st.Get(ctx, "k", store.Full()); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("after Delete: %v", err)
	}
	var keys []string
	for k, err := range st.List(ctx, "") {
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k)
	}
	if len(keys) != 0 {
		t.Errorf("listed %v", keys)
	}
	st.Set(ctx, "d/x", []byte("1"))
	ks, dirs, err := st.ListDir(ctx, "")
	if err != nil || len(ks) != 0 || len(dirs) != 1 || dirs[0] != "d/" {
		t.Errorf("ListDir %v %v %v", ks, dirs, err)
	}
	if u := s.(interface{ Unwrap() store.Reader }).Unwrap(); u != store.Reader(m) {
		t.Errorf("Unwrap = %T", u)
	}
}

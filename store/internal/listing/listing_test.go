package listing_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/internal/listing"
	"github.com/gozarr/gozarr/store/mem"
)

var sortedKeys = []string{"a-b/x", "a.json", "a/0/1", "a/0/2", "a/c/", "a/zarr.json", "ab", "b/c/d/e", "zarr.json"}

// TestSortedAndDir: List and ListDir over a sorted slice answer as the
// memory store holding the same keys does (a key ending in "/" names a
// directory, which the memory store cannot hold: it is added apart).
func TestSortedAndDir(t *testing.T) {
	ctx := context.Background()
	m := mem.New()
	for _, k := range sortedKeys {
		if k[len(k)-1] == '/' {
			k += "x"
		}
		if err := m.Set(ctx, k, []byte{1}); err != nil {
			t.Fatal(err)
		}
	}
	for _, prefix := range []string{"", "a", "a/", "a/0/", "b/c/d/e", "c"} {
		var got, want []string
		for k, err := range listing.Sorted(ctx, sortedKeys, prefix) {
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, k)
		}
		for k, err := range m.List(ctx, prefix) {
			if err != nil {
				t.Fatal(err)
			}
			if k == "a/c/x" {
				k = "a/c/"
			}
			want = append(want, k)
		}
		if !slices.Equal(got, want) {
			t.Errorf("Sorted(%q) = %q, want %q", prefix, got, want)
		}
	}
	for _, dir := range []string{"", "a", "a/", "a/0/", "a/c/", "b/", "b/c/d/", "nothing/"} {
		keys, dirs, err := listing.Dir(ctx, sortedKeys, dir)
		if err != nil {
			t.Fatal(err)
		}
		wk, wd, err := m.ListDir(ctx, dir)
		if err != nil {
			t.Fatal(err)
		}
		if dir == "a/c/" {
			wk = nil // the memory store's stand-in key "a/c/x"
		}
		if !slices.Equal(keys, wk) || !slices.Equal(dirs, wd) {
			t.Errorf("Dir(%q) = %q %q, want %q %q", dir, keys, dirs, wk, wd)
		}
	}
}

// TestBadArguments: invalid prefixes and dirs are store.ErrInvalidKey; a
// done context is a *store.KeyError wrapping context.Canceled.
func TestBadArguments(t *testing.T) {
	ctx := context.Background()
	for _, bad := range []string{"/", "a//", "../", "a/../b", "a\\b"} {
		n := 0
		for _, err := range listing.Sorted(ctx, sortedKeys, bad) {
			n++
			if !errors.Is(err, store.ErrInvalidKey) {
				t.Errorf("Sorted(%q): %v, want ErrInvalidKey", bad, err)
			}
		}
		if n != 1 {
			t.Errorf("Sorted(%q) yielded %d times, want the error alone", bad, n)
		}
		if _, _, err := listing.Dir(ctx, sortedKeys, bad); !errors.Is(err, store.ErrInvalidKey) {
			t.Errorf("Dir(%q): %v, want ErrInvalidKey", bad, err)
		}
	}
	done, cancel := context.WithCancel(ctx)
	cancel()
	var ke *store.KeyError
	n := 0
	for k, err := range listing.Sorted(done, sortedKeys, "a/") {
		n++
		if !errors.Is(err, context.Canceled) || !errors.As(err, &ke) || ke.Key != "a/" {
			t.Errorf("Sorted on a done context: %q %v", k, err)
		}
	}
	if n != 1 {
		t.Errorf("Sorted on a done context yielded %d times, want the error alone", n)
	}
	if _, _, err := listing.Dir(done, sortedKeys, "a/"); !errors.Is(err, context.Canceled) || !errors.As(err, &ke) {
		t.Errorf("Dir on a done context: %v", err)
	}
}

// TestGathered: the gathered keys (in any order) are listed sorted under
// the prefix; an invalid prefix gathers nothing; gather's error is
// yielded alone.
func TestGathered(t *testing.T) {
	ctx := context.Background()
	calls := 0
	gather := func() ([]string, error) {
		calls++
		return []string{"b/2", "a/1", "zarr.json", "a/0", "ab"}, nil
	}
	var got []string
	for k, err := range listing.Gathered(ctx, "a/", gather) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, k)
	}
	if !slices.Equal(got, []string{"a/0", "a/1"}) || calls != 1 {
		t.Errorf("Gathered(a/) = %q after %d gathers, want [a/0 a/1] after 1", got, calls)
	}
	for _, err := range listing.Gathered(ctx, "../", gather) {
		if !errors.Is(err, store.ErrInvalidKey) {
			t.Errorf("Gathered(../): %v, want ErrInvalidKey", err)
		}
	}
	if calls != 1 {
		t.Errorf("an invalid prefix gathered (%d calls)", calls)
	}
	bad := errors.New("manifest unreadable")
	n := 0
	for k, err := range listing.Gathered(ctx, "", func() ([]string, error) { return []string{"x"}, bad }) {
		n++
		if k != "" || err != bad {
			t.Errorf("Gathered with a failing gather: %q %v", k, err)
		}
	}
	if n != 1 {
		t.Errorf("a failing gather yielded %d times, want 1", n)
	}
}

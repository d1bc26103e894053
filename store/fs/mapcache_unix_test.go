//go:build unix

package fs_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/gozarr/gozarr/store/fs"
)

// counts tracks Map's mappings from the start of a test: delta returns
// the mappings made and unmapped since.
type counts struct{ maps, unmaps int64 }

func startCounts() counts {
	m, u := fs.MapCounts()
	return counts{m, u}
}

func (c counts) delta() (maps, unmaps int64) {
	m, u := fs.MapCounts()
	return m - c.maps, u - c.unmaps
}

// check fails t unless the mappings made and unmapped since c are maps
// and unmaps.
func (c counts) check(t *testing.T, what string, maps, unmaps int64) {
	t.Helper()
	if m, u := c.delta(); m != maps || u != unmaps {
		t.Fatalf("%s: %d mapped and %d unmapped, want %d and %d", what, m, u, maps, unmaps)
	}
}

// checkStats fails t unless s's cache holds entries mappings, idle of
// them idle, of bytes bytes.
func checkStats(t *testing.T, what string, s *fs.Store, entries, idle int, bytes int64) {
	t.Helper()
	if e, i, b := fs.MapCacheStats(s); e != entries || i != idle || b != bytes {
		t.Fatalf("%s: the cache holds %d mappings (%d idle) of %d bytes, want %d (%d idle) of %d", what, e, i, b, entries, idle, bytes)
	}
}

// filled returns n bytes of v.
func filled(n int, v byte) []byte { return bytes.Repeat([]byte{v}, n) }

// mapValue maps key and fails t unless its bytes are want.
func mapValue(t *testing.T, s *fs.Store, key string, want []byte) ([]byte, func()) {
	t.Helper()
	b, unmap, err := s.Map(context.Background(), key)
	if err != nil {
		t.Fatalf("Map(%s): %v", key, err)
	}
	if !bytes.Equal(b, want) {
		t.Fatalf("Map(%s): %d bytes starting %v, want %d starting %v", key, len(b), b[:min(len(b), 4)], len(want), want[:min(len(want), 4)])
	}
	return b, unmap
}

// same reports whether a and b are the same bytes in memory.
func same(a, b []byte) bool {
	return len(a) == len(b) && unsafe.SliceData(a) == unsafe.SliceData(b)
}

// TestMapCacheHit checks that a second Map of an unchanged file returns
// the same mapped bytes without mapping again, that releasing keeps the
// mapping idle in the cache until Close unmaps it, and that releasing
// twice through one handle releases once.
func TestMapCacheHit(t *testing.T) {
	ctx := context.Background()
	s, _ := newStore(t)
	v := filled(3<<16+5, 7)
	if err := s.Set(ctx, "c/0", v); err != nil {
		t.Fatal(err)
	}
	c := startCounts()
	b1, unmap1 := mapValue(t, s, "c/0", v)
	b2, unmap2 := mapValue(t, s, "c/0", v)
	if !same(b1, b2) {
		t.Fatal("a second Map of an unchanged file mapped it again")
	}
	c.check(t, "two Maps of one file", 1, 0)
	checkStats(t, "both held", s, 1, 0, int64(len(v)))
	unmap1()
	unmap1() // a second release through the same handle does nothing
	checkStats(t, "one released twice, one held", s, 1, 0, int64(len(v)))
	unmap2()
	checkStats(t, "both released", s, 1, 1, int64(len(v)))
	c.check(t, "both released", 1, 0)
	b3, unmap3 := mapValue(t, s, "c/0", v)
	if !same(b1, b3) {
		t.Fatal("a Map after the release mapped the file again")
	}
	unmap3()
	c.check(t, "a third Map", 1, 0)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	c.check(t, "Close", 1, 1)
	checkStats(t, "Close", s, 0, 0, 0)
}

// TestMapCacheReplaced checks that a file renamed over the key by another
// writer is mapped afresh, with its new bytes, while a reader of the old
// mapping still reads the old ones, and that the old mapping is unmapped
// when that reader releases it.
func TestMapCacheReplaced(t *testing.T) {
	ctx := context.Background()
	s, root := newStore(t)
	v1, v2 := filled(1<<16, 1), filled(1<<16, 2) // the same size
	if err := s.Set(ctx, "k", v1); err != nil {
		t.Fatal(err)
	}
	c := startCounts()
	old, unmapOld := mapValue(t, s, "k", v1)
	tmp := filepath.Join(root, "other")
	if err := os.WriteFile(tmp, v2, 0o666); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(root, "k")); err != nil {
		t.Fatal(err)
	}
	_, unmapNew := mapValue(t, s, "k", v2)
	c.check(t, "a Map after the rename", 2, 0)
	if !bytes.Equal(old, v1) {
		t.Fatal("the old mapping no longer reads the old file")
	}
	checkStats(t, "old and new held", s, 1, 0, int64(len(v2)))
	unmapOld()
	c.check(t, "the old mapping released", 2, 1)
	unmapNew()
	checkStats(t, "the new released", s, 1, 1, int64(len(v2)))
	// A Set through the store drops the idle mapping at once.
	if err := s.Set(ctx, "k", v1); err != nil {
		t.Fatal(err)
	}
	c.check(t, "Set", 2, 2)
	checkStats(t, "Set", s, 0, 0, 0)
	_, unmap := mapValue(t, s, "k", v1)
	unmap()
	c.check(t, "a Map after Set", 3, 2)
}

// TestMapCacheRewritten checks that a file rewritten in place (same
// inode, same size, a new modification time) is mapped afresh.
func TestMapCacheRewritten(t *testing.T) {
	ctx := context.Background()
	s, root := newStore(t)
	v1, v2 := filled(1<<16, 1), filled(1<<16, 2)
	if err := s.Set(ctx, "k", v1); err != nil {
		t.Fatal(err)
	}
	c := startCounts()
	_, unmap := mapValue(t, s, "k", v1)
	unmap()
	f, err := os.OpenFile(filepath.Join(root, "k"), os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(v2, 0); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	mtime := time.Now().Add(time.Hour)
	if err := os.Chtimes(filepath.Join(root, "k"), mtime, mtime); err != nil {
		t.Fatal(err)
	}
	_, unmap = mapValue(t, s, "k", v2)
	c.check(t, "a Map after the rewrite", 2, 1)
	unmap()
	checkStats(t, "after the rewrite", s, 1, 1, int64(len(v2)))
}

// TestMapCacheTruncated checks that a file truncated in place, under an
// idle cached mapping and under a held one, is mapped afresh at its new
// size on the next Map, and that the held old mapping is unmapped on its
// release.
func TestMapCacheTruncated(t *testing.T) {
	ctx := context.Background()
	s, root := newStore(t)
	page := os.Getpagesize()
	v := make([]byte, 4*page)
	for i := range v {
		v[i] = byte(i * 13)
	}
	if err := s.Set(ctx, "k", v); err != nil {
		t.Fatal(err)
	}
	c := startCounts()
	_, unmap := mapValue(t, s, "k", v)
	unmap()
	if err := os.Truncate(filepath.Join(root, "k"), int64(2*page)); err != nil {
		t.Fatal(err)
	}
	_, held := mapValue(t, s, "k", v[:2*page])
	c.check(t, "a Map after the truncation of an idle mapping", 2, 1)
	if err := os.Truncate(filepath.Join(root, "k"), int64(page+1)); err != nil {
		t.Fatal(err)
	}
	_, unmap = mapValue(t, s, "k", v[:page+1])
	c.check(t, "a Map after the truncation of a held mapping", 3, 1)
	held()
	c.check(t, "the truncated mapping released", 3, 2)
	unmap()
	checkStats(t, "after the truncations", s, 1, 1, int64(page+1))
}

// TestMapCacheBound checks that idle mappings are evicted, the least
// recently released first, beyond the bytes and the count of the bound,
// that held ones are not, and that Delete, and a Map of a key deleted by
// another writer, drop its mapping.
func TestMapCacheBound(t *testing.T) {
	ctx := context.Background()
	const size = 1 << 14
	for _, tc := range []struct {
		name  string
		bytes int64
		count int
	}{{"bytes", 3 * size, 100}, {"count", 1 << 30, 3}} {
		t.Run(tc.name, func(t *testing.T) {
			s, root := newStore(t, fs.MapCache(tc.bytes, tc.count))
			for i := range 6 {
				if err := s.Set(ctx, fmt.Sprint("k", i), filled(size, byte(i))); err != nil {
					t.Fatal(err)
				}
			}
			c := startCounts()
			for i := range 5 {
				_, unmap := mapValue(t, s, fmt.Sprint("k", i), filled(size, byte(i)))
				unmap()
			}
			c.check(t, "five mapped in turn", 5, 2)
			checkStats(t, "five mapped in turn", s, 3, 3, 3*size)
			// k2, k3, k4 are kept: k0 maps again (evicting k2), k4 does not.
			for _, i := range []int{4, 0} {
				_, unmap := mapValue(t, s, fmt.Sprint("k", i), filled(size, byte(i)))
				unmap()
			}
			c.check(t, "k4 and k0 again", 6, 3)
			_, unmap := mapValue(t, s, "k3", filled(size, 3))
			unmap()
			c.check(t, "k3 again", 6, 3)
			// Held mappings exceed the bound and stay mapped until released.
			var held []func()
			var maps [][]byte
			for i := range 6 {
				b, unmap := mapValue(t, s, fmt.Sprint("k", i), filled(size, byte(i)))
				maps, held = append(maps, b), append(held, unmap)
			}
			checkStats(t, "six held", s, 6, 0, 6*size)
			for i, b := range maps {
				if !bytes.Equal(b, filled(size, byte(i))) {
					t.Fatalf("held mapping of k%d changed", i)
				}
			}
			for _, unmap := range held {
				unmap()
			}
			checkStats(t, "six released", s, 3, 3, 3*size)
			// k3, k4, k5, released last, are kept.
			if err := s.Delete(ctx, "k5"); err != nil {
				t.Fatal(err)
			}
			checkStats(t, "k5 deleted", s, 2, 2, 2*size)
			if err := os.Remove(filepath.Join(root, "k4")); err != nil {
				t.Fatal(err)
			}
			if _, _, err := s.Map(ctx, "k4"); err == nil {
				t.Fatal("Map of a deleted file succeeded")
			}
			checkStats(t, "k4 deleted by another writer", s, 1, 1, size)
			m, u := c.delta()
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			c.check(t, "Close", m, u+1)
		})
	}
}

// TestMapCacheClose checks that Close unmaps the idle mappings at once
// and a held one at its release, which still reads its bytes until then,
// and that a store closed does not keep the mappings it makes.
func TestMapCacheClose(t *testing.T) {
	ctx := context.Background()
	s, _ := newStore(t, fs.FollowSymlinks()) // a store that still reads once closed
	a, b := filled(1<<16, 'a'), filled(1<<16, 'b')
	for k, v := range map[string][]byte{"a": a, "b": b} {
		if err := s.Set(ctx, k, v); err != nil {
			t.Fatal(err)
		}
	}
	c := startCounts()
	held, unmapA := mapValue(t, s, "a", a)
	_, unmapB := mapValue(t, s, "b", b)
	unmapB()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	c.check(t, "Close", 2, 1)
	if !bytes.Equal(held, a) {
		t.Fatal("Close changed a held mapping")
	}
	unmapA()
	unmapA()
	c.check(t, "the held mapping released twice", 2, 2)
	_, unmap := mapValue(t, s, "b", b)
	unmap()
	c.check(t, "a Map after Close", 3, 3)
	checkStats(t, "after Close", s, 0, 0, 0)
}

// TestMapCacheDisabled checks that MapCache(0, 0) maps the file on every
// Map and unmaps it on the release, once per handle.
func TestMapCacheDisabled(t *testing.T) {
	ctx := context.Background()
	s, _ := newStore(t, fs.MapCache(0, 0))
	v := filled(1<<16, 3)
	if err := s.Set(ctx, "k", v); err != nil {
		t.Fatal(err)
	}
	c := startCounts()
	_, unmap1 := mapValue(t, s, "k", v)
	_, unmap2 := mapValue(t, s, "k", v)
	c.check(t, "two Maps", 2, 0)
	unmap1()
	unmap1()
	c.check(t, "one released twice", 2, 1)
	unmap2()
	c.check(t, "both released", 2, 2)
	checkStats(t, "disabled", s, 0, 0, 0)
}

// TestMapCacheConcurrent maps and releases a few keys from several
// goroutines while another rewrites them through the store (for -race):
// every Map returns a whole version of its value, the cache stays within
// its bound once all are released, and Close unmaps everything.
func TestMapCacheConcurrent(t *testing.T) {
	ctx := context.Background()
	s, _ := newStore(t, fs.MapCache(1<<30, 3))
	const keys, size = 5, 3 << 12
	for k := range keys {
		if err := s.Set(ctx, fmt.Sprint("k", k), filled(size+k, 0)); err != nil {
			t.Fatal(err)
		}
	}
	c := startCounts()
	var wg sync.WaitGroup
	errs := make(chan error, 10)
	stop := make(chan struct{})
	wg.Go(func() {
		for v := 1; ; v++ {
			select {
			case <-stop:
				return
			default:
			}
			k := v % keys
			if err := s.Set(ctx, fmt.Sprint("k", k), filled(size+k, byte(v))); err != nil {
				errs <- err
				return
			}
		}
	})
	var readers sync.WaitGroup
	for g := range 6 {
		readers.Go(func() {
			r := rand.New(rand.NewPCG(uint64(g), 1))
			var held []func()
			for range 400 {
				k := r.IntN(keys)
				b, unmap, err := s.Map(ctx, fmt.Sprint("k", k))
				if err != nil {
					errs <- err
					return
				}
				if len(b) != size+k || !bytes.Equal(b, filled(len(b), b[0])) {
					errs <- fmt.Errorf("k%d: %d bytes, not one version of the value", k, len(b))
					unmap()
					return
				}
				held = append(held, unmap)
				if len(held) > 2 || r.IntN(2) == 0 {
					i := r.IntN(len(held))
					held[i]()
					if r.IntN(4) == 0 {
						held[i]() // a second release does nothing
					}
					held = append(held[:i], held[i+1:]...)
				}
			}
			for _, unmap := range held {
				unmap()
			}
		})
	}
	readers.Wait()
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if e, i, _ := fs.MapCacheStats(s); e > 3 || i != e {
		t.Fatalf("all released: the cache holds %d mappings, %d of them idle, want at most 3, all idle", e, i)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if m, u := c.delta(); m != u || m == 0 {
		t.Fatalf("%d mapped, %d unmapped after Close, want as many", m, u)
	}
}

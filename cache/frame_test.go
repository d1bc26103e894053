package cache

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
)

// noisy returns n bytes that compress poorly, so frames stay large
// (off the heap), distinct per key.
func noisy(key string, n int) []byte {
	r := rand.New(rand.NewPCG(uint64(len(key)), uint64(key[len(key)-1])))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	copy(b, key)
	return b
}

// TestFrameRefs checks the reference counting of frames: a released frame
// cannot be retained again, and the bytes stay readable while a reference
// is held.
func TestFrameRefs(t *testing.T) {
	src := noisy("k1", 64<<10)
	f := newFrame(src)
	if !bytes.Equal(f.b, src) {
		t.Fatal("frame does not hold its source")
	}
	if mapPopulate != 0 && f.onFree == nil { // only mapped frames free anything
		t.Error("a 64 KiB frame is on the Go heap")
	}
	if !f.retain() {
		t.Fatal("retain of a live frame failed")
	}
	f.release() // the cache's reference
	if !bytes.Equal(f.b, src) {
		t.Fatal("bytes changed while a reader holds them")
	}
	freed, unmap := false, f.onFree
	f.onFree = func() {
		freed = true
		if unmap != nil {
			unmap()
		}
	}
	f.release()
	if !freed || f.retain() {
		t.Errorf("after the last release: freed %v, retain succeeded %v", freed, !freed)
	}
	small := newFrame([]byte("tiny"))
	if small.onFree != nil || string(small.b) != "tiny" {
		t.Errorf("small frame: mapped %v, %q", small.onFree != nil, small.b)
	}
}

// TestCompressedOffHeapConcurrent hammers a Compressed cache of off-heap
// frames with Gets, Adds and Removes of the same keys at once: every value
// served must be the one added (a frame freed under a reader would crash
// or serve garbage).
func TestCompressedOffHeapConcurrent(t *testing.T) {
	const n = 40 << 10
	keys := make([]string, 8)
	vals := make([][]byte, len(keys))
	for i := range keys {
		keys[i] = fmt.Sprint("key", i)
		vals[i] = noisy(keys[i], n)
	}
	z := NewCompressed(3*weight(keys[0], n+4096), CompressedOptions{ElemSize: 4})
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 7))
			for range 400 {
				i := r.IntN(len(keys))
				switch r.IntN(4) {
				case 0:
					z.Add(keys[i], vals[i])
				case 1:
					z.Remove(keys[i])
				default:
					if v, ok := z.Get(keys[i]); ok && !bytes.Equal(v, vals[i]) {
						t.Errorf("Get(%s) served other bytes", keys[i])
						return
					}
				}
			}
		})
	}
	wg.Wait()
	if st := z.Stats(); st.Errors != 0 || st.Bytes > st.MaxBytes {
		t.Errorf("stats %v (%s)", st, st.LastError)
	}
}

// TestTieredPacksToDisk checks that an entry evicted from a Compressed
// tier reaches the Disk tier as its frame (fewer bytes on disk than the
// value), and reads back equal.
func TestTieredPacksToDisk(t *testing.T) {
	const n = 64 << 10
	fs := NewCompressed(1<<30, CompressedOptions{}).pack(val("k0", n), 4).size()
	mid := NewCompressed(2*weight("k0", fs), CompressedOptions{ElemSize: 4})
	disk, err := NewDisk(1<<24, DiskOptions{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer disk.Close()
	tc, err := NewTiered(NewLRU(weight("k0", n)), mid, disk)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 6 {
		k := fmt.Sprint("k", i)
		tc.AddElem(k, val(k, n), 4)
	}
	ds := disk.Stats()
	if ds.Entries < 3 || ds.ValueBytes != int64(ds.Entries)*n {
		t.Fatalf("disk tier %v", ds)
	}
	if stored := ds.Bytes - int64(ds.Entries)*(EntryOverhead+2); stored >= ds.ValueBytes/2 {
		t.Errorf("disk holds %d bytes for %d bytes of values: not the compressed frames", stored, ds.ValueBytes)
	}
	for _, en := range disk.c.all() {
		if !en.v.packed {
			t.Errorf("disk entry %s stored decoded", en.key)
		}
	}
	for i := range 6 {
		k := fmt.Sprint("k", i)
		if v, ok := tc.Get(k); !ok || !bytes.Equal(v, val(k, n)) {
			t.Errorf("Get(%s): %v, equal %v", k, ok, bytes.Equal(v, val(k, n)))
		}
	}
}

// BenchmarkFrame measures making and freeing one 64 KiB frame (off the heap
// on Unix).
func BenchmarkFrame(b *testing.B) {
	src := noisy("k1", 64<<10)
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		newFrame(src).release()
	}
}

// BenchmarkArenaFrame measures making and freeing one 64 KiB frame carved
// from an arena (what a bounded Compressed cache does).
func BenchmarkArenaFrame(b *testing.B) {
	src := noisy("k1", 64<<10)
	a := newArena(16 << 20)
	if a == nil {
		b.Skip("no arena here")
	}
	defer unmapBytes(a.mem)
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		a.frame(src).release()
	}
}

// TestArena checks frames carved from an arena: contents, reuse of freed
// room, refusal when full, and that a full arena leaves the cache working
// (frames then mapped on their own).
func TestArena(t *testing.T) {
	a := newArena(256 << 10)
	if a == nil {
		t.Skip("no arena here")
	}
	defer unmapBytes(a.mem)
	var fs []*frame
	for i := range 5 {
		src := noisy(fmt.Sprint("k", i), 60<<10)
		f := a.frame(src)
		if i == 4 {
			if f != nil {
				t.Fatal("a 256 KiB arena gave a fifth 60 KiB frame")
			}
			break
		}
		if f == nil || !bytes.Equal(f.b, src) || f.size() != 60<<10 {
			t.Fatalf("frame %d: %v", i, f)
		}
		fs = append(fs, f)
	}
	fs[1].release()
	f := a.frame(noisy("k9", 50<<10)) // fits in frame 1's room
	if f == nil || &f.b[0] != &a.mem[60<<10] {
		t.Fatalf("freed room not reused")
	}
	if !bytes.Equal(fs[2].b, noisy("k2", 60<<10)) {
		t.Error("a neighbour changed")
	}
	for _, g := range append(fs, f) {
		if g != fs[1] {
			g.release()
		}
	}
	if a.space.end != 0 || a.space.live != 0 {
		t.Errorf("all freed: end %d live %d", a.space.end, a.space.live)
	}
	// A Compressed cache whose arena is full maps frames on their own.
	z := NewCompressed(256<<10, CompressedOptions{})
	for i := range 12 {
		k := fmt.Sprint("k", i)
		z.Add(k, noisy(k, 60<<10))
	}
	for i := 8; i < 12; i++ {
		k := fmt.Sprint("k", i)
		if v, ok := z.Get(k); ok && !bytes.Equal(v, noisy(k, 60<<10)) {
			t.Errorf("Get(%s) wrong bytes", k)
		}
	}
	if st := z.Stats(); st.Bytes > st.MaxBytes || st.Entries == 0 {
		t.Errorf("stats %v", st)
	}
}

// TestTieredCorruptFrameMovingDown: a frame that no longer decompresses,
// evicted from a Compressed tier to a tier that keeps decoded values,
// leaves the cache and is counted as an error by the tier it fell from.
func TestTieredCorruptFrameMovingDown(t *testing.T) {
	const n = 64 << 10
	fs := NewCompressed(1<<30, CompressedOptions{}).pack(val("k0", n), 4).size()
	top := NewCompressed(weight("k0", fs), CompressedOptions{ElemSize: 4})
	bottom := NewLRU(1 << 24)
	tc, err := NewTiered(top, bottom)
	if err != nil {
		t.Fatal(err)
	}
	tc.AddElem("k0", val("k0", n), 4)
	f := top.c.held("k0").v
	f.b = f.b[:len(f.b)/2] // corrupt: truncated
	tc.AddElem("k1", val("k1", n), 4)
	if _, ok := bottom.Get("k0"); ok {
		t.Error("a corrupt frame reached the next tier")
	}
	if st := top.Stats(); st.Errors != 1 || !strings.Contains(st.LastError, "k0") {
		t.Errorf("top tier stats %v (%s), want the error counted", st, st.LastError)
	}
	if v, ok := tc.Get("k1"); !ok || !bytes.Equal(v, val("k1", n)) {
		t.Error("k1 lost")
	}
}

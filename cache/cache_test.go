package cache

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"github.com/gozarr/gozarr/codecs/blosc"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// val returns a deterministic value of n bytes for key: float32s of a
// smooth ramp (compressible after shuffling) salted by the key.
func val(key string, n int) []byte {
	b := make([]byte, n)
	salt := float32(len(key))
	for i := 0; i+4 <= n; i += 4 {
		binary.LittleEndian.PutUint32(b[i:], math.Float32bits(salt+float32(i/4)*0.25))
	}
	for i := n &^ 3; i < n; i++ {
		b[i] = byte(i)
	}
	if len(key) > 0 && n > 0 {
		b[0] = key[len(key)-1]
	}
	return b
}

// noise returns n incompressible bytes.
func noise(n int) []byte {
	b := make([]byte, n)
	x := uint64(0x9E3779B97F4A7C15)
	for i := range b {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		b[i] = byte(x >> 32)
	}
	return b
}

// caches builds one of each cache holding at most max bytes.
func caches(t *testing.T, max int64) map[string]Cache {
	t.Helper()
	d, err := NewDisk(max, DiskOptions{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return map[string]Cache{
		"lru":        NewLRU(max),
		"lz4":        NewCompressed(max, CompressedOptions{ElemSize: 4}),
		"zstd":       NewCompressed(max, CompressedOptions{ElemSize: 4, Codec: Zstd}),
		"disk":       d,
		"compressed": NewCompressed(max, CompressedOptions{}),
	}
}

func TestKeyUnambiguous(t *testing.T) {
	keys := []string{
		Key("s", "a/0", 0, -1), Key("s", "a/0", 0, 0), Key("s", "a/0", 8, 0), Key("s", "a/0", 8, 1),
		Key("sa", "/0", 0, -1), Key("s", "a/0#0", 0, -1), Key("", "sa/0", 0, -1), Key("s", "a/0@8", 0, 0),
	}
	seen := map[string]bool{}
	for _, k := range keys {
		if seen[k] {
			t.Errorf("key %q built twice", k)
		}
		seen[k] = true
	}
}

// TestEvictionOrder checks every cache evicts least recently used first and
// counts its bytes exactly.
func TestEvictionOrder(t *testing.T) {
	const n = 1000
	for name, c := range caches(t, 1<<20) {
		t.Run(name, func(t *testing.T) {
			// Measure one entry's weight, then size the bound for 3.
			c.Add("probe", val("k0", n))
			w := c.Stats().Bytes
			c.Remove("probe")
			if st := c.Stats(); st.Bytes != 0 || st.Entries != 0 {
				t.Fatalf("after Remove: %v", st)
			}
			if name == "lru" || name == "disk" {
				if want := weight("probe", n); w != want {
					t.Fatalf("weight %d, want %d", w, want)
				}
			}
			var c3 Cache
			switch name {
			case "lru":
				c3 = NewLRU(3 * w)
			case "lz4":
				c3 = NewCompressed(3*w, CompressedOptions{ElemSize: 4})
			case "zstd":
				c3 = NewCompressed(3*w, CompressedOptions{ElemSize: 4, Codec: Zstd})
			case "compressed":
				c3 = NewCompressed(3*w, CompressedOptions{})
			case "disk":
				d, err := NewDisk(3*w, DiskOptions{Dir: t.TempDir()})
				if err != nil {
					t.Fatal(err)
				}
				defer d.Close()
				c3 = d
			}
			for _, k := range []string{"k1", "k2", "k3"} {
				c3.Add(k, val(k, n))
			}
			if _, ok := c3.Get("k1"); !ok { // k1 now most recent: k2 goes first
				t.Fatal("k1 missing")
			}
			c3.Add("k4", val("k4", n))
			want := map[string]bool{"k1": true, "k2": false, "k3": true, "k4": true}
			for k, in := range want {
				v, ok := c3.Get(k)
				if ok != in {
					t.Errorf("%s held %v, want %v", k, ok, in)
				}
				if ok && !bytes.Equal(v, val(k, n)) {
					t.Errorf("%s: wrong value", k)
				}
			}
			st := c3.Stats()
			if st.Entries != 3 || st.Evictions != 1 || st.Bytes > 3*w || st.ValueBytes != 3*n {
				t.Errorf("stats %v, want 3 entries, 1 eviction, ≤ %d bytes, %d value bytes", st, 3*w, 3*n)
			}
			if st.Hits != 4 || st.Misses != 1 {
				t.Errorf("hits %d misses %d, want 4, 1", st.Hits, st.Misses)
			}
			// Replacing a key keeps the count; a value larger than the
			// bound is not kept and drops the old one.
			c3.Add("k3", val("k3x", n))
			if v, _ := c3.Get("k3"); !bytes.Equal(v, val("k3x", n)) {
				t.Error("k3 not replaced")
			}
			if st := c3.Stats(); st.Entries != 3 {
				t.Errorf("after replace: %v", st)
			}
			big := noise(int(4 * w))
			c3.Add("k3", big)
			if _, ok := c3.Get("k3"); ok {
				t.Error("oversized value kept")
			}
			if st := c3.Stats(); st.Entries != 2 {
				t.Errorf("after oversized add: %v", st)
			}
		})
	}
}

func TestLRUKeysOrder(t *testing.T) {
	l := NewLRU(1 << 20)
	for _, k := range []string{"a", "b", "c"} {
		l.Add(k, []byte(k))
	}
	l.Get("a")
	if got, want := l.Keys(), []string{"a", "c", "b"}; !slices.Equal(got, want) {
		t.Errorf("Keys %v, want %v", got, want)
	}
	if st := l.Stats(); st.Bytes != 3*(1+1+EntryOverhead) {
		t.Errorf("bytes %d", st.Bytes)
	}
}

// TestCompressedRoundTrip covers codecs, element sizes and tails.
func TestCompressedRoundTrip(t *testing.T) {
	random := noise(4099)
	values := map[string][]byte{"empty": {}, "one": {7}, "ramp": val("r", 1<<16), "ramp-tail": val("t", 1<<16+3), "random": random, "zeros": make([]byte, 5000)}
	for _, codec := range []Codec{LZ4, Zstd} {
		for _, elem := range []int{0, 1, 2, 4, 8, 3} {
			for name, v := range values {
				t.Run(fmt.Sprintf("%v/%d/%s", codec, elem, name), func(t *testing.T) {
					z := NewCompressed(1<<30, CompressedOptions{Codec: codec})
					z.AddElem("k", v, elem)
					got, ok := z.Get("k")
					if !ok || !bytes.Equal(got, v) {
						t.Fatalf("round trip failed (ok %v, %d bytes)", ok, len(got))
					}
					st := z.Stats()
					if st.ValueBytes != int64(len(v)) {
						t.Errorf("value bytes %d, want %d", st.ValueBytes, len(v))
					}
					if name == "zeros" && st.Bytes-weight("k", 0) > 500 {
						t.Errorf("zeros stored in %d bytes", st.Bytes-weight("k", 0))
					}
					// Incompressible data is stored as it is, behind the
					// 16-byte Blosc header, in whole arena grains.
					if limit := int64(len(v)+blosc.HeaderSize+arenaGrain-1) &^ (arenaGrain - 1); name == "random" && st.Bytes-weight("k", 0) > limit {
						t.Errorf("random data grew to %d bytes", st.Bytes-weight("k", 0))
					}
				})
			}
		}
	}
}

// TestShuffleHelps checks the shuffle makes float data smaller.
func TestShuffleHelps(t *testing.T) {
	v := val("x", 1<<18)
	plain := NewCompressed(1<<30, CompressedOptions{})
	shuf := NewCompressed(1<<30, CompressedOptions{ElemSize: 4})
	plain.Add("k", v)
	shuf.Add("k", v)
	if p, s := plain.Stats().Bytes, shuf.Stats().Bytes; s >= p {
		t.Errorf("shuffled %d bytes, plain %d", s, p)
	}
}

func TestCompressedCorruptEntry(t *testing.T) {
	z := NewCompressed(1<<20, CompressedOptions{ElemSize: 4})
	z.Add("k", val("k", 4096))
	e := z.c.held("k")
	e.v.b = e.v.b[:len(e.v.b)/2]
	if _, ok := z.Get("k"); ok {
		t.Fatal("corrupt entry served")
	}
	st := z.Stats()
	if st.Errors != 1 || st.Entries != 0 || st.LastError == "" {
		t.Errorf("stats %v", st)
	}
}

// fileBytes returns the length of a Disk cache's file.
func fileBytes(t *testing.T, d *Disk) int64 {
	t.Helper()
	fi, err := os.Stat(filepath.Join(d.Dir(), diskFile))
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

func TestDiskFileAndClose(t *testing.T) {
	parent := t.TempDir()
	d, err := NewDisk(3*weight("k1", 100), DiskOptions{Dir: parent})
	if err != nil {
		t.Fatal(err)
	}
	dir := d.Dir()
	if filepath.Dir(dir) != parent || !bytes.HasPrefix([]byte(filepath.Base(dir)), []byte(diskPrefix)) {
		t.Errorf("dir %q", dir)
	}
	if _, err := os.Stat(filepath.Join(dir, DiskMarker)); err != nil {
		t.Errorf("marker: %v", err)
	}
	for i := range 5 {
		d.Add(fmt.Sprint("k", i), val(fmt.Sprint("k", i), 100))
	}
	// Each Add writes before it evicts: k3 went to the end, k4 into the
	// block k0 left; k1's block is free.
	if n := d.Stats().Entries; n != 3 {
		t.Errorf("%d entries after evictions, want 3", n)
	}
	if n := fileBytes(t, d); n != 3*diskBlock+100 {
		t.Errorf("file of %d bytes, want %d", n, 3*diskBlock+100)
	}
	for _, k := range []string{"k2", "k3", "k4"} {
		if v, ok := d.Get(k); !ok || !bytes.Equal(v, val(k, 100)) {
			t.Errorf("Get(%s) = %q, %v", k, v, ok)
		}
	}
	d.Remove("k3") // the last extent: the file shrinks
	if n := fileBytes(t, d); n != 3*diskBlock {
		t.Errorf("file of %d bytes after removing the last extent, want %d (k1's free block goes too)", n, 3*diskBlock)
	}
	d.Remove("k2")
	d.Remove("k4") // everything free: the file is empty
	if n := fileBytes(t, d); n != 0 {
		t.Errorf("file of %d bytes when empty", n)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("directory still there: %v", err)
	}
	d.Add("k9", val("k9", 10))
	if _, ok := d.Get("k9"); ok {
		t.Error("closed cache served a value")
	}
	if err := d.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// TestDiskSpace checks the allocator: best fit, splitting, merging of
// neighbours, truncation of a free end, and the punch signal past the
// slack.
func TestDiskSpace(t *testing.T) {
	var s space
	s.init(64<<20, 2)
	type call struct {
		from, to int64
		tail     bool
	}
	var calls []call
	rel := func(from, to int64, tail bool) { calls = append(calls, call{from, to, tail}) }
	const b = diskBlock
	a := s.alloc(2 * b) // [0, 2b)
	c := s.alloc(b)     // [2b, 3b)
	e := s.alloc(3 * b) // [3b, 6b)
	g := s.alloc(b)     // [6b, 7b)
	if a != 0 || c != 2*b || e != 3*b || g != 6*b || s.end != 7*b {
		t.Fatalf("offsets %d %d %d %d end %d", a, c, e, g, s.end)
	}
	s.free(a, 2*b, rel)
	s.free(e, 3*b, rel)
	if len(calls) != 0 {
		t.Errorf("frees inside the slack released %v", calls)
	}
	// Best fit: 1 block comes from the 2-block hole, not the 3-block one.
	if off := s.alloc(b); off != 0 {
		t.Errorf("best fit at %d, want 0", off)
	}
	if off := s.alloc(3 * b); off != 3*b {
		t.Errorf("exact fit at %d, want %d", off, 3*b)
	}
	// [b,2b) is free; freeing [2b,3b) and [0,b) merges the three.
	s.free(c, b, rel)
	s.free(0, b, rel)
	if sz := s.byStart[0]; sz != 3*b || s.freeSum != 3*b || len(s.bySize) != 1 {
		t.Errorf("merged extent %d bytes, free %d, %d sizes; want %d, %d, 1", sz, s.freeSum, len(s.bySize), 3*b, 3*b)
	}
	// Freeing the middle merges; freeing the last extent releases the
	// whole file as a tail, taking the free space before it.
	s.free(3*b, 3*b, rel)
	s.free(g, b, rel)
	if len(calls) != 1 || calls[0] != (call{0, 7 * b, true}) || s.end != 0 || s.freeSum != 0 || s.live != 0 {
		t.Errorf("calls %v, end %d, free %d, live %d; want one tail release [0, %d)", calls, s.end, s.freeSum, s.live, 7*b)
	}
	// Past the slack, frees release their range.
	var big space
	big.init(64<<20, 2)
	offs := make([]int64, 40)
	for i := range offs {
		offs[i] = big.alloc(4 << 20)
	}
	calls = nil
	for i := 0; i < len(offs)-1; i += 2 {
		big.free(offs[i], 4<<20, rel)
	}
	if len(calls) == 0 || len(calls) == 20 || calls[0].tail || calls[0].to-calls[0].from != 4<<20 {
		t.Errorf("releases %v; want some 4 MiB ranges, after 64 MiB free", calls)
	}
}

// TestDiskForeignMarker: Close never removes a directory whose marker is
// not its own.
func TestDiskForeignMarker(t *testing.T) {
	d, err := NewDisk(1<<20, DiskOptions{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(d.Dir(), DiskMarker), []byte("someone else\n"), 0o600)
	if err := d.Close(); !errors.Is(err, ErrCache) {
		t.Errorf("Close = %v, want ErrCache", err)
	}
	if _, err := os.Stat(d.Dir()); err != nil {
		t.Errorf("foreign directory removed: %v", err)
	}
}

// faultyFile fails every read and write of a Disk cache's file, as a
// full or failing disk does.
type faultyFile struct{ fileIO }

var errDiskFull = errors.New("no space left on device (injected)")

func (faultyFile) ReadAt([]byte, int64) (int, error)  { return 0, errDiskFull }
func (faultyFile) WriteAt([]byte, int64) (int, error) { return 0, errDiskFull }

func TestDiskUnwritable(t *testing.T) {
	if _, err := NewDisk(1<<20, DiskOptions{Dir: filepath.Join(t.TempDir(), "no", "such")}); !errors.Is(err, ErrCache) {
		t.Errorf("NewDisk in a missing directory = %v, want ErrCache", err)
	}
	d, err := NewDisk(1<<20, DiskOptions{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	d.Add("old", val("old", 100))
	// The disk fails: writes and reads fail, the cache reports them and
	// serves nothing.
	d.f = faultyFile{d.f}
	d.Add("k", val("k", 100))
	if _, ok := d.Get("k"); ok {
		t.Error("failed write served")
	}
	st := d.Stats()
	if st.Errors != 1 || !strings.Contains(st.LastError, "injected") || st.Entries != 1 {
		t.Errorf("stats after failed write: %v (%s)", st, st.LastError)
	}
	// A read through GetOrLoad still succeeds, from the loader.
	got, err := GetOrLoad(context.Background(), d, "k2", func(context.Context) ([]byte, error) { return val("k2", 50), nil })
	if err != nil || !bytes.Equal(got, val("k2", 50)) {
		t.Errorf("GetOrLoad = %v", err)
	}
	if d.Stats().Errors != 2 {
		t.Errorf("errors %d, want 2", d.Stats().Errors)
	}
	if _, ok := d.Get("old"); ok {
		t.Error("unreadable value served")
	}
	if st := d.Stats(); st.Errors != 3 || st.Entries != 0 {
		t.Errorf("after a failed read: %v, want 3 errors and the entry dropped", st)
	}
	if err := d.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
}

// TestTieredMovement: evictions move down, hits move up, values survive.
func TestTieredMovement(t *testing.T) {
	const n = 4000
	w := weight("k0", n)
	top := NewLRU(2 * w)
	mid := NewCompressed(1<<20, CompressedOptions{ElemSize: 4})
	disk, err := NewDisk(1<<20, DiskOptions{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	tc, err := NewTiered(top, mid, disk)
	if err != nil {
		t.Fatal(err)
	}
	defer tc.Close()
	has := func(c Cache, k string) bool {
		for _, e := range c.(evictHooker).(interface{ keys() []string }).keys() {
			if e == k {
				return true
			}
		}
		return false
	}
	for i := range 3 {
		k := fmt.Sprint("k", i)
		tc.AddElem(k, val(k, n), 4)
	}
	if !has(mid, "k0") || has(top, "k0") || !has(top, "k1") || !has(top, "k2") {
		t.Fatalf("after 3 adds: top %v mid %v", top.Keys(), mid.c.all())
	}
	if v, ok := tc.Get("k0"); !ok || !bytes.Equal(v, val("k0", n)) {
		t.Fatal("k0 lost")
	}
	// k0 copied up (mid keeps its copy), k1 (least recent in top) down.
	if !has(top, "k0") || !has(mid, "k0") || !has(mid, "k1") || has(top, "k1") {
		t.Errorf("after hit: top %v", top.Keys())
	}
	// Fill mid so that it spills to disk.
	midW := mid.Stats().Bytes / int64(mid.Stats().Entries)
	mid2 := NewCompressed(midW+midW/2, CompressedOptions{ElemSize: 4})
	disk2, _ := NewDisk(1<<20, DiskOptions{Dir: t.TempDir()})
	tc2, _ := NewTiered(NewLRU(w), mid2, disk2)
	defer tc2.Close()
	for i := range 4 {
		k := fmt.Sprint("k", i)
		tc2.AddElem(k, val(k, n), 4)
	}
	// top holds k3, mid k2, disk k0 and k1.
	st := tc2.Stats()
	if len(st.Tiers) != 3 || st.Tiers[0].Entries != 1 || st.Tiers[1].Entries != 1 || st.Tiers[2].Entries != 2 || st.Entries != 4 {
		t.Fatalf("tier stats: %+v", st.Tiers)
	}
	if v, ok := tc2.Get("k0"); !ok || !bytes.Equal(v, val("k0", n)) {
		t.Fatal("k0 not served from disk")
	}
	if !has(tc2.tiers[0], "k0") || !has(disk2, "k0") {
		t.Error("k0 not copied up from disk")
	}
	// k3 fell out of the top into mid (which held nothing of it), and the
	// disk tier was not written again for k0.
	writes := disk2.Stats().Entries
	tc2.AddElem("k5", val("k5", n), 4) // pushes k0 down again
	if !has(mid2, "k0") && !has(disk2, "k0") {
		t.Error("k0 lost on its way down")
	}
	if disk2.Stats().Entries < writes {
		t.Errorf("disk entries %d, were %d", disk2.Stats().Entries, writes)
	}
	if _, ok := tc2.Get("nope"); ok {
		t.Error("phantom hit")
	}
	if st := tc2.Stats(); st.Hits != 1 || st.Misses != 1 {
		t.Errorf("tiered hits %d misses %d", st.Hits, st.Misses)
	}
	tc2.Remove("k0")
	if _, ok := tc2.Get("k0"); ok {
		t.Error("removed key served")
	}
	// Oversized for tier 0 goes straight to tier 1.
	tc2.AddElem("big", val("big", 2*n), 4)
	if has(tc2.tiers[0], "big") || !(has(mid2, "big") || has(disk2, "big")) {
		t.Error("oversized value not handed down")
	}
}

// keys lists an internal cache's keys, for TestTieredMovement.
func (l *LRU) keys() []string        { return l.Keys() }
func (z *Compressed) keys() []string { return entryKeys(z.c.all()) }
func (d *Disk) keys() []string       { return entryKeys(d.c.all()) }

func entryKeys[V any](es []entry[V]) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.key
	}
	return out
}

func TestTieredInvalid(t *testing.T) {
	if _, err := NewTiered(); !errors.Is(err, ErrTier) {
		t.Errorf("no tiers: %v", err)
	}
	if _, err := NewTiered(mapCache{}, NewLRU(10)); !errors.Is(err, ErrTier) {
		t.Errorf("foreign top tier: %v", err)
	}
	if _, err := NewTiered(NewLRU(10), mapCache{}); err != nil {
		t.Errorf("foreign last tier: %v", err)
	}
}

// mapCache is a Cache of another package's making.
type mapCache struct{}

func (mapCache) Get(string) ([]byte, bool) { return nil, false }
func (mapCache) Add(string, []byte)        {}
func (mapCache) Remove(string)             {}
func (mapCache) Stats() Stats              { return Stats{} }

// TestConcurrent hammers every cache (run with -race): values served are
// always the key's own.
func TestConcurrent(t *testing.T) {
	all := caches(t, 40*weight("k00", 512))
	d3, _ := NewDisk(1<<20, DiskOptions{Dir: t.TempDir()})
	tiered, _ := NewTiered(NewLRU(5*weight("k00", 512)), NewCompressed(10*weight("k00", 512), CompressedOptions{ElemSize: 4}), d3)
	defer tiered.Close()
	all["tiered"] = tiered
	for name, c := range all {
		t.Run(name, func(t *testing.T) {
			var wg sync.WaitGroup
			var bad atomic.Int32
			for g := range 8 {
				wg.Go(func() {
					for i := range 300 {
						k := fmt.Sprintf("k%02d", (i*7+g)%60)
						switch i % 5 {
						case 0, 1:
							c.Add(k, val(k, 512))
						case 4:
							c.Remove(k)
						default:
							if v, ok := c.Get(k); ok && !bytes.Equal(v, val(k, 512)) {
								bad.Add(1)
							}
						}
					}
				})
			}
			wg.Wait()
			if bad.Load() != 0 {
				t.Errorf("%d wrong values served", bad.Load())
			}
			st := c.Stats()
			if st.Bytes > st.MaxBytes || st.Errors != 0 {
				t.Errorf("stats %v (%s)", st, st.LastError)
			}
		})
	}
}

// TestGetOrLoadSingleFlight: concurrent misses of one key load it once,
// even in a cache that keeps nothing.
func TestGetOrLoadSingleFlight(t *testing.T) {
	for _, c := range []Cache{NewLRU(0), NewLRU(1 << 20), mapCache{}} {
		var loads atomic.Int32
		release := make(chan struct{})
		started := make(chan struct{})
		load := func(context.Context) ([]byte, error) {
			if loads.Add(1) == 1 {
				close(started)
			}
			<-release
			return []byte("value"), nil
		}
		const n = 8
		var wg sync.WaitGroup
		results := make([][]byte, n)
		errs := make([]error, n)
		wg.Go(func() { results[0], errs[0] = GetOrLoad(context.Background(), c, "key", load) })
		<-started
		for i := 1; i < n; i++ {
			wg.Go(func() { results[i], errs[i] = GetOrLoad(context.Background(), c, "key", load) })
		}
		f := &fallbackFlights
		if fg, ok := c.(flightGrouper); ok {
			f = fg.flights()
		}
		for {
			f.mu.Lock()
			w := f.m["key"].waiters.Load()
			f.mu.Unlock()
			if w == n-1 {
				break
			}
			runtimeGosched()
		}
		close(release)
		wg.Wait()
		if loads.Load() != 1 {
			t.Errorf("%T: %d loads, want 1", c, loads.Load())
		}
		for i := range n {
			if errs[i] != nil || string(results[i]) != "value" {
				t.Errorf("%T: caller %d got %q, %v", c, i, results[i], errs[i])
			}
		}
	}
}

func TestGetOrLoadErrors(t *testing.T) {
	c := NewLRU(1 << 20)
	boom := errors.New("boom")
	if _, err := GetOrLoad(context.Background(), c, "k", func(context.Context) ([]byte, error) { return nil, boom }); !errors.Is(err, boom) {
		t.Errorf("err %v", err)
	}
	if c.Stats().Entries != 0 {
		t.Error("error cached")
	}
	_, err := GetOrLoad(context.Background(), c, "p", func(context.Context) ([]byte, error) { panic("bad loader") })
	if err == nil {
		t.Error("panic not reported")
	}
	// A waiter whose context ends returns at once.
	release := make(chan struct{})
	started := make(chan struct{})
	go GetOrLoad(context.Background(), c, "slow", func(context.Context) ([]byte, error) { close(started); <-release; return []byte("x"), nil })
	<-started
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := GetOrLoad(ctx, c, "slow", func(context.Context) ([]byte, error) { return []byte("y"), nil }); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled waiter: %v", err)
	}
	close(release)
	// A leader whose context is cancelled does not fail a live waiter: the
	// waiter loads again with its own context.
	lctx, lcancel := context.WithCancel(context.Background())
	c2 := NewLRU(0)
	leaderStarted := make(chan struct{})
	leaderDone := make(chan error)
	go func() {
		_, err := GetOrLoad(lctx, c2, "z", func(ctx context.Context) ([]byte, error) {
			close(leaderStarted)
			<-ctx.Done()
			return nil, ctx.Err()
		})
		leaderDone <- err
	}()
	<-leaderStarted
	waiterDone := make(chan []byte)
	go func() {
		v, err := GetOrLoad(context.Background(), c2, "z", func(context.Context) ([]byte, error) { return []byte("mine"), nil })
		if err != nil {
			t.Errorf("waiter: %v", err)
		}
		waiterDone <- v
	}()
	for {
		c2.mu.Lock()
		cl := c2.m["z"]
		c2.mu.Unlock()
		if cl != nil && cl.waiters.Load() == 1 {
			break
		}
		runtimeGosched()
	}
	lcancel()
	if err := <-leaderDone; !errors.Is(err, context.Canceled) {
		t.Errorf("leader: %v", err)
	}
	if v := <-waiterDone; string(v) != "mine" {
		t.Errorf("waiter got %q", v)
	}
}

// TestCompressedHoldsOnlyCompressedBytes checks that an entry's memory is
// its compressed size, not a buffer with room for the whole value.
func TestCompressedHoldsOnlyCompressedBytes(t *testing.T) {
	z := NewCompressed(1<<30, CompressedOptions{ElemSize: 4})
	v := make([]byte, 1<<20) // zeros: compresses to almost nothing
	z.Add("k", v)
	e := z.c.held("k")
	if c := cap(e.v.b); c > 64<<10 {
		t.Fatalf("entry of %d compressed bytes holds a %d-byte buffer", len(e.v.b), c)
	}
}

// TestGetBytes checks that GetBytes finds what Get finds, in every cache
// (through ByteGetter or the fallback) and in a Tiered cache whose entry
// sits in its first tier or below, counting one hit or one miss per
// lookup, and that an LRU hit by bytes allocates nothing.
func TestGetBytes(t *testing.T) {
	const n = 4096
	cs := caches(t, 1<<20)
	small := NewLRU(n + EntryOverhead + 64) // holds one entry: the older moves down
	tiered, err := NewTiered(small, NewCompressed(1<<20, CompressedOptions{ElemSize: 4}))
	if err != nil {
		t.Fatal(err)
	}
	cs["tiered"] = tiered
	for name, c := range cs {
		t.Run(name, func(t *testing.T) {
			k1, k2 := Key("s", "a/0", 0, 3), Key("s", "a/1", 0, 3)
			c.Add(k1, val(k1, n))
			c.Add(k2, val(k2, n))
			before := c.Stats()
			if name == "tiered" && before.Tiers[0].Entries != 1 {
				t.Fatalf("first tier holds %d entries, want 1", before.Tiers[0].Entries)
			}
			for _, k := range []string{k1, k2} {
				v, ok := GetBytes(c, []byte(k))
				if !ok || !bytes.Equal(v, val(k, n)) {
					t.Fatalf("GetBytes(%q): ok %v, value equal %v", k, ok, bytes.Equal(v, val(k, n)))
				}
			}
			if v, ok := GetBytes(c, []byte(Key("s", "a/2", 0, 3))); ok || v != nil {
				t.Fatalf("GetBytes of a missing key: %d bytes, %v", len(v), ok)
			}
			after := c.Stats()
			if after.Hits-before.Hits != 2 || after.Misses-before.Misses != 1 {
				t.Errorf("2 hits and 1 miss counted as %d hits, %d misses", after.Hits-before.Hits, after.Misses-before.Misses)
			}
			if name == "tiered" {
				// k1 (moved down), then k2 (moved down by k1's
				// promotion) and the missing key each miss the first
				// tier once.
				if m := after.Tiers[0].Misses - before.Tiers[0].Misses; m != 3 {
					t.Errorf("first tier counted %d misses for 3 lookups that missed it", m)
				}
			}
		})
	}
	l := NewLRU(1 << 20)
	k := []byte(Key("store-with-a-long-name", "group/array/c/0/0/0", 0, 17))
	l.Add(string(k), val(string(k), n))
	if a := testing.AllocsPerRun(100, func() {
		if _, ok := GetBytes(l, k); !ok {
			t.Fatal("miss")
		}
	}); a != 0 {
		t.Errorf("an LRU hit by bytes allocates %v times", a)
	}
	tl, err := NewTiered(l, NewLRU(1<<20))
	if err != nil {
		t.Fatal(err)
	}
	if a := testing.AllocsPerRun(100, func() {
		if _, ok := GetBytes(tl, k); !ok {
			t.Fatal("miss")
		}
	}); a != 0 {
		t.Errorf("a Tiered first-tier hit by bytes allocates %v times", a)
	}
}

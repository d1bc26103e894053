package zip_test

import (
	stdzip "archive/zip"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/zip"
)

// largeValue is a compressible value of n bytes (a counter pattern, so
// each range's bytes are known).
func largeValue(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i / 4096)
	}
	return b
}

// allocated returns the bytes f allocates.
func allocated(f func()) uint64 {
	var a, b runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&a)
	f()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

// largeDeflate returns an n-byte value (largeValue) and a stdlib archive
// holding it as the deflate entry "shard"; it skips t in short mode.
func largeDeflate(t *testing.T, n int) (val, arch []byte) {
	t.Helper()
	if testing.Short() {
		t.Skipf("inflates %d MiB", n>>20)
	}
	val = largeValue(n)
	return val, stdlibZip(t, map[string][]byte{"shard": val}, stdzip.Deflate)
}

// TestLargeDeflateRanges (issue 27): ranges of a deflate entry larger than
// the one-entry cache (a 20 MiB shard stored as one compressible deflate
// entry, about 30 KiB compressed) are inflated as far as the ranges
// need, keeping only their bytes: a few ranges near the start allocate
// well under a MiB, not the entry; ranges across it allocate their bytes
// plus blocks of compressed data, never the inflated entry; the values are
// the stdlib writer's.
func TestLargeDeflateRanges(t *testing.T) {
	const n = 20 << 20
	val, arch := largeDeflate(t, n)
	r := open(t, put(t, "mem", arch))
	ctx := context.Background()
	check := func(ranges []store.ByteRange, maxAlloc uint64) {
		t.Helper()
		var got [][]byte
		var err error
		alloc := allocated(func() { got, err = r.GetRanges(ctx, "shard", ranges) })
		if err != nil {
			t.Fatal(err)
		}
		for i, br := range ranges {
			s, e, _ := br.Resolve(n)
			if !bytes.Equal(got[i], val[s:e]) {
				t.Fatalf("range %v: wrong bytes", br)
			}
		}
		t.Logf("%d ranges: %d bytes allocated (entry %d bytes, archive %d)", len(ranges), alloc, n, len(arch))
		if alloc > maxAlloc {
			t.Errorf("%d ranges allocated %d bytes, want at most %d (the entry is %d)", len(ranges), alloc, maxAlloc, n)
		}
	}
	// Near the start: only the first compressed block is read.
	check([]store.ByteRange{store.OffsetLen(0, 100), store.OffsetLen(5000, 10), store.OffsetLen(50, 4000)}, 4<<20)
	// Across the entry, the end included (the size is checked there).
	check([]store.ByteRange{store.OffsetLen(1<<20, 10), store.OffsetLen(12<<20, 1000), store.Suffix(16)}, 8<<20)
	// One Get of a range in the middle.
	var b []byte
	alloc := allocated(func() { b, _ = r.Get(ctx, "shard", store.OffsetLen(10<<20, 64)) })
	if !bytes.Equal(b, val[10<<20:10<<20+64]) || alloc > 8<<20 {
		t.Errorf("Get of 64 bytes in the middle: allocated %d bytes (equal %v)", alloc, bytes.Equal(b, val[10<<20:10<<20+64]))
	}
	// The whole value still reads, CRC checked.
	if b, err := r.Get(ctx, "shard", store.Full()); err != nil || !bytes.Equal(b, val) {
		t.Fatalf("whole value: %v", err)
	}
}

// TestLargeDeflateCorrupt: a large deflate entry whose data is damaged
// past the ranges asked for still serves them; a read to the end finds
// the damage (ErrFormat), as does a directory claiming more than deflate
// can expand to.
func TestLargeDeflateCorrupt(t *testing.T) {
	val, arch := largeDeflate(t, 18<<20)
	// Cut the compressed data short: the archive keeps its directory.
	dir := bytes.LastIndex(arch, []byte("PK\x01\x02"))
	bad := append([]byte{}, arch...)
	for i := dir - 64; i < dir-8; i++ {
		bad[i] ^= 0x5a
	}
	r := open(t, put(t, "mem", bad))
	ctx := context.Background()
	got, err := r.GetRanges(ctx, "shard", []store.ByteRange{store.OffsetLen(10, 10)})
	if err != nil || !bytes.Equal(got[0], val[10:20]) {
		t.Fatalf("range before the damage: %v", err)
	}
	if _, err := r.GetRanges(ctx, "shard", []store.ByteRange{store.Suffix(10)}); !errors.Is(err, zip.ErrFormat) {
		t.Fatalf("range past the damage: %v, want ErrFormat", err)
	}
}

// countingSource counts the bytes its Gets return.
type countingSource struct {
	store.Reader
	n atomic.Int64
}

func (c *countingSource) Get(ctx context.Context, key string, r store.ByteRange) ([]byte, error) {
	b, err := c.Reader.Get(ctx, key, r)
	c.n.Add(int64(len(b)))
	return b, err
}

// TestLargeDeflateSequential (issue 27 audit): ranges of a large deflate
// entry read one call after another, in order (a shard read chunk by
// chunk), inflate the entry once: the next read continues where the last
// stopped. Each read inflated from the entry's start, so reading a 256 MiB
// single-entry shard chunk by chunk took 153 s where the directory took
// 0.4 s. Read by two goroutines at once, interleaved, it is inflated once
// (at most once a goroutine). The values are the stdlib writer's.
func TestLargeDeflateSequential(t *testing.T) {
	if testing.Short() {
		t.Skip("inflates 20 MiB several times")
	}
	const n, parts = 20 << 20, 16 // past maxCached: inflated in part
	val := make([]byte, n)        // incompressible: the compressed data is as long
	rng := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < n; i += 8 {
		binary.LittleEndian.PutUint64(val[i:], rng.Uint64())
	}
	arch := stdlibZip(t, map[string][]byte{"shard": val}, stdzip.Deflate)
	ctx := context.Background()
	read := func(r *zip.Reader, k int) {
		off := int64(k) * n / parts
		got, err := r.GetRanges(ctx, "shard", []store.ByteRange{store.OffsetLen(off, 1000), store.OffsetLen(off+5000, 64)})
		if err != nil {
			t.Error(err)
			return
		}
		if !bytes.Equal(got[0], val[off:off+1000]) || !bytes.Equal(got[1], val[off+5000:off+5064]) {
			t.Errorf("part %d: wrong bytes", k)
		}
	}
	for _, workers := range []int{1, 2} {
		src := &countingSource{Reader: put(t, "mem", arch)}
		r := open(t, src)
		base := src.n.Load()
		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() {
				for k := w; k < parts; k += workers {
					read(r, k)
				}
			})
		}
		wg.Wait()
		got := src.n.Load() - base
		t.Logf("%d workers: %d parts read %d bytes of a %d-byte archive", workers, parts, got, len(arch))
		// Once, or once a goroutine when their reads leapfrog (which
		// depends on the scheduler): never once a part.
		if got > int64(len(arch))*int64(workers)+int64(len(arch))/2 {
			t.Errorf("%d workers: %d parts in order read %d bytes of the archive, want at most %d.5 × its %d", workers, parts, got, workers, len(arch))
		}
	}
}

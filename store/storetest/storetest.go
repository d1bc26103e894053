// Package storetest is the conformance suite every gozarr store backend
// runs: TestStore for read-write stores, TestReader for stores that can only
// be read (HTTP, for one), and BenchmarkStore for shared benchmarks.
//
// A backend's test calls them with a constructor:
//
//	func TestConformance(t *testing.T) {
//		storetest.TestStore(t, func(t *testing.T) store.Store { return mem.New() })
//	}
//
// # What the suite expects
//
// Beyond the interface docs in package store, the suite holds every backend
// to these rules, so callers can rely on them whatever the backend:
//   - Errors wrap the store sentinels and are, or wrap, a *store.KeyError
//     naming the key (or, for listing, the prefix).
//   - Get of an existing key never returns a nil slice, even when it selects
//     no bytes, so "exists but empty" is told apart from a missing key.
//   - A key that is only a "directory" of other keys is missing.
//   - Range validation (negative offset or length) comes before any I/O, and
//     so does the key check: hostile keys are refused with
//     store.ErrInvalidKey and nothing is written.
//   - A done context fails every call with an error wrapping ctx.Err(),
//     and nothing is written or deleted.
//
// The suite never stores a key alongside another key that has it as a
// directory prefix ("a" and "a/b"): filesystems cannot hold both, and Zarr
// never asks for it.
package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/gozarr/gozarr/store"
)

// digits is the 10-byte value that the range table reads.
var digits = []byte("0123456789")

// HostileKeys are keys every store must refuse with store.ErrInvalidKey.
var HostileKeys = []string{
	"", ".", "..", "../x", "a/../b", "a/..", "./a", "a/./b", "/abs", "/", "a/", "a//b",
	`a\b`, `..\x`, "a\x00b", "a\nb", "\x7f",
}

// fixture returns the initial contents the reader subtests run against.
func fixture() map[string][]byte {
	return map[string][]byte{
		"digits":         digits,
		"empty":          {},
		"dir/a":          []byte("A"),
		"dir/sub/b":      []byte("BB"),
		"large":          pattern(3<<20+17, 1),
		"zarr.json":      []byte(`{"zarr_format":3,"node_type":"group"}`),
		"a.txt":          []byte("a.txt"),
		"ab":             []byte("ab"),
		"c/0/0":          []byte("c00"),
		"c/0/1":          []byte("c01"),
		"c/1/0":          []byte("c10"),
		"c/10":           []byte("c10!"),
		"odd name-é.bin": []byte("utf-8"),
	}
}

// pattern returns n deterministic pseudo-random bytes.
func pattern(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	b := make([]byte, n)
	for i := 0; i < n; i += 8 {
		v := r.Uint64()
		for j := 0; j < 8 && i+j < n; j++ {
			b[i+j] = byte(v >> (8 * j))
		}
	}
	return b
}

// TestStore runs the whole suite. newStore must return a fresh, empty store
// each time it is called (it is called once per subtest).
func TestStore(t *testing.T, newStore func(t *testing.T) store.Store) {
	t.Helper()
	t.Run("Reader", func(t *testing.T) {
		TestReader(t, func(t *testing.T, contents map[string][]byte) store.Reader {
			s := newStore(t)
			for k, v := range contents {
				if err := s.Set(context.Background(), k, v); err != nil {
					t.Fatalf("Set(%q): %v", k, err)
				}
			}
			return s
		})
	})
	t.Run("SetOverwrite", func(t *testing.T) { testSetOverwrite(t, newStore(t)) })
	t.Run("SetCopiesValue", func(t *testing.T) { testSetCopies(t, newStore(t)) })
	t.Run("Delete", func(t *testing.T) { testDelete(t, newStore(t)) })
	t.Run("HostileKeysWrite", func(t *testing.T) { testHostileWrite(t, newStore(t)) })
	t.Run("ConcurrentReadWrite", func(t *testing.T) { testConcurrent(t, newStore(t)) })
	t.Run("CancelledWrite", func(t *testing.T) { testCancelledWrite(t, newStore(t)) })
	t.Run("LargeValue", func(t *testing.T) { testLarge(t, newStore(t)) })
	t.Run("ListAfterWrites", func(t *testing.T) { testListAfterWrites(t, newStore(t)) })
	t.Run("Capabilities", func(t *testing.T) { TestCapabilities(t, newStore) })
}

// TestReader runs the read-only part of the suite. newReader must return a
// store holding exactly contents (it is called once per subtest). When the
// store also implements store.Lister, the listing subtests run too.
func TestReader(t *testing.T, newReader func(t *testing.T, contents map[string][]byte) store.Reader) {
	t.Helper()
	contents := fixture()
	t.Run("Ranges", func(t *testing.T) { testRanges(t, newReader(t, contents)) })
	t.Run("MissingKey", func(t *testing.T) { testMissing(t, newReader(t, contents)) })
	t.Run("InvalidRange", func(t *testing.T) { testInvalidRange(t, newReader(t, contents)) })
	t.Run("GetRanges", func(t *testing.T) { testGetRanges(t, newReader(t, contents)) })
	open := func(t *testing.T) store.Reader { return newReader(t, contents) }
	t.Run("ReadInto", implementing(open, testReadInto))
	t.Run("ReadVec", implementing(open, testReadVec))
	t.Run("Size", implementing(open, func(t *testing.T, sr store.SizeReader) { testSize(t, sr, contents) }))
	t.Run("CondReader", func(t *testing.T) { testDeclaredCondReader(t, newReader(t, contents), contents) })
	t.Run("ResultIsCallers", func(t *testing.T) { testResultIsCallers(t, newReader(t, contents)) })
	t.Run("HostileKeysRead", func(t *testing.T) { testHostileRead(t, newReader(t, contents)) })
	t.Run("CancelledRead", func(t *testing.T) { testCancelledRead(t, newReader(t, contents)) })
	t.Run("ConcurrentRead", func(t *testing.T) { testConcurrentRead(t, newReader(t, contents)) })
	t.Run("LargeRead", func(t *testing.T) {
		r := newReader(t, contents)
		want := contents["large"]
		mustGet(t, r, "large", store.Full(), want)
		mustGet(t, r, "large", store.OffsetLen(1<<20+3, 1<<20), want[1<<20+3:2<<20+3])
		mustGet(t, r, "large", store.Suffix(100_000), want[len(want)-100_000:])
	})
	t.Run("List", implementing(open, func(t *testing.T, l store.Lister) { testList(t, l, contents) }))
	t.Run("ListDir", implementing(open, testListDir))
}

// implementing returns a subtest that runs test on the reader open makes
// when it implements I, and skips otherwise.
func implementing[I any](open func(t *testing.T) store.Reader, test func(t *testing.T, i I)) func(t *testing.T) {
	return func(t *testing.T) {
		i, ok := open(t).(I)
		if !ok {
			t.Skipf("store does not implement %v", reflect.TypeFor[I]())
		}
		test(t, i)
	}
}

// testDeclaredCondReader checks the conditional reads r declares
// (Capabilities.CondReader): a reader with a GetIf method declares it; no
// condition reads as Get; a version that is not the value's yields no
// bytes but store.ErrChanged (or store.ErrConditionUnsupported, when the
// store cannot tell); a missing key is store.ErrNotFound; and a wrapper
// (store.CountingStore) passes it on, its reads counted. TestConditionalReader
// checks the store against versions it names.
func testDeclaredCondReader(t *testing.T, r store.Reader, contents map[string][]byte) {
	ctx := context.Background()
	cr := store.CapabilitiesOf(r).CondReader
	if cr == nil {
		if _, ok := r.(store.ConditionalReader); ok {
			t.Fatalf("%T has GetIf but its capabilities declare no CondReader", r)
		}
		t.Skip("store declares no conditional reads")
	}
	want := contents["digits"]
	if got, err := cr.GetIf(ctx, "digits", store.OffsetLen(2, 5), store.ReadCondition{}); err != nil || !bytes.Equal(got, want[2:7]) {
		t.Errorf("GetIf without a condition = %s, %v; want %s", show(got), err, show(want[2:7]))
	}
	other := store.ReadCondition{ETag: `"gozarr-not-this-version"`}
	got, err := cr.GetIf(ctx, "digits", store.Full(), other)
	if !errors.Is(err, store.ErrChanged) && !errors.Is(err, store.ErrConditionUnsupported) || len(got) != 0 {
		t.Errorf("GetIf of another version = %s, %v; want no bytes, store.ErrChanged", show(got), err)
	}
	if _, err := cr.GetIf(ctx, "no/such/key", store.Full(), other); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GetIf of a missing key: err = %v, want store.ErrNotFound", err)
	}
	c := store.NewCountingStore(r)
	ccr := store.CapabilitiesOf(c).CondReader
	if ccr == nil {
		t.Fatal("a CountingStore over the store declares no CondReader")
	}
	if got, err := ccr.GetIf(ctx, "digits", store.Full(), store.ReadCondition{}); err != nil || !bytes.Equal(got, want) {
		t.Errorf("GetIf through a CountingStore = %s, %v; want %s", show(got), err, show(want))
	}
	if c.Requests() != 1 || c.Bytes() != int64(len(want)) {
		t.Errorf("CountingStore counted %d requests, %d bytes; want 1, %d", c.Requests(), c.Bytes(), len(want))
	}
}

// checkKeyErr checks that err wraps want and is a *store.KeyError naming key.
func checkKeyErr(t *testing.T, what string, err, want error, key string) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Errorf("%s: err = %v, want %v", what, err, want)
		return
	}
	var ke *store.KeyError
	if !errors.As(err, &ke) {
		t.Errorf("%s: err %v (%T) is not a *store.KeyError", what, err, err)
	} else if ke.Key != key {
		t.Errorf("%s: KeyError.Key = %q, want %q", what, ke.Key, key)
	}
}

func mustGet(t *testing.T, r store.Reader, key string, br store.ByteRange, want []byte) {
	t.Helper()
	got, err := r.Get(context.Background(), key, br)
	if err != nil {
		t.Errorf("Get(%q, %v): %v", key, br, err)
		return
	}
	if got == nil || !bytes.Equal(got, want) {
		t.Errorf("Get(%q, %v) = %s, want %s", key, br, show(got), show(want))
	}
}

// show formats a value for error messages, shortening long ones.
func show(b []byte) string {
	if b == nil {
		return "nil"
	}
	if len(b) > 40 {
		return fmt.Sprintf("%d bytes %q...", len(b), b[:40])
	}
	return fmt.Sprintf("%q", b)
}

// rangeCase is one row of the range table.
type rangeCase struct {
	key  string
	r    store.ByteRange
	want []byte
}

func rangeTable() []rangeCase {
	d := digits
	return []rangeCase{
		{"digits", store.Full(), d},
		{"digits", store.OffsetLen(0, 10), d},
		{"digits", store.OffsetLen(2, 3), d[2:5]},
		{"digits", store.OffsetLen(0, 1), d[:1]},
		{"digits", store.OffsetLen(9, 1), d[9:]},
		{"digits", store.OffsetLen(3, 0), []byte{}},
		{"digits", store.OffsetLen(0, 0), []byte{}},
		{"digits", store.OffsetLen(8, 100), d[8:]},
		{"digits", store.OffsetLen(10, 5), []byte{}},
		{"digits", store.OffsetLen(20, 5), []byte{}},
		{"digits", store.OffsetLen(10, 0), []byte{}},
		{"digits", store.OffsetLen(20, 0), []byte{}},
		{"digits", store.OffsetLen(1, math.MaxInt64-1), d[1:]},
		{"digits", store.From(0), d},
		{"digits", store.From(4), d[4:]},
		{"digits", store.From(9), d[9:]},
		{"digits", store.From(10), []byte{}},
		{"digits", store.From(11), []byte{}},
		{"digits", store.Suffix(3), d[7:]},
		{"digits", store.Suffix(1), d[9:]},
		{"digits", store.Suffix(10), d},
		{"digits", store.Suffix(11), d},
		{"digits", store.Suffix(1 << 40), d},
		{"digits", store.Suffix(0), []byte{}},
		{"empty", store.Full(), []byte{}},
		{"empty", store.OffsetLen(0, 0), []byte{}},
		{"empty", store.OffsetLen(0, 5), []byte{}},
		{"empty", store.OffsetLen(3, 5), []byte{}},
		{"empty", store.From(0), []byte{}},
		{"empty", store.From(2), []byte{}},
		{"empty", store.Suffix(0), []byte{}},
		{"empty", store.Suffix(4), []byte{}},
		{"dir/a", store.Full(), []byte("A")},
		{"dir/sub/b", store.Suffix(1), []byte("B")},
		{"odd name-é.bin", store.Full(), []byte("utf-8")},
	}
}

func testRanges(t *testing.T, r store.Reader) {
	for _, tc := range rangeTable() {
		mustGet(t, r, tc.key, tc.r, tc.want)
	}
}

// validRanges are one of each form, for tests that try every form.
var validRanges = []store.ByteRange{store.Full(), store.OffsetLen(0, 1), store.OffsetLen(5, 0), store.From(0), store.From(3), store.Suffix(2), store.Suffix(0)}

func testMissing(t *testing.T, r store.Reader) {
	ctx := context.Background()
	// "dir" and "dir/sub" exist only as directories; "digits/x" and
	// "dir/a/b" go below a value.
	for _, key := range []string{"missing", "dir", "dir/sub", "dir/b", "digits/x", "dir/a/b", "c", "c/0", "zarr.jso"} {
		for _, br := range validRanges {
			got, err := r.Get(ctx, key, br)
			checkKeyErr(t, fmt.Sprintf("Get(%q, %v) = %s", key, br, show(got)), err, store.ErrNotFound, key)
		}
		_, err := store.GetRanges(ctx, r, key, validRanges)
		checkKeyErr(t, fmt.Sprintf("GetRanges(%q)", key), err, store.ErrNotFound, key)
	}
}

func testInvalidRange(t *testing.T, r store.Reader) {
	ctx := context.Background()
	for _, br := range []store.ByteRange{store.OffsetLen(-1, 2), store.OffsetLen(0, -1), store.OffsetLen(-5, -5), store.From(-1), store.Suffix(-1), store.OffsetLen(1, math.MaxInt64)} {
		got, err := r.Get(ctx, "digits", br)
		checkKeyErr(t, fmt.Sprintf("Get(digits, %v) = %s", br, show(got)), err, store.ErrInvalidRange, "digits")
		_, err = store.GetRanges(ctx, r, "digits", []store.ByteRange{store.Full(), br})
		if !errors.Is(err, store.ErrInvalidRange) {
			t.Errorf("GetRanges(digits, [full %v]): err = %v, want ErrInvalidRange", br, err)
		}
	}
}

func testGetRanges(t *testing.T, r store.Reader) {
	ctx := context.Background()
	table := rangeTable()
	var ranges []store.ByteRange
	var want [][]byte
	for _, tc := range table {
		if tc.key == "digits" {
			ranges = append(ranges, tc.r)
			want = append(want, tc.want)
		}
	}
	// Reverse order and repeats, so an implementation that sorts or merges
	// must put results back in order.
	slices.Reverse(ranges)
	slices.Reverse(want)
	ranges = append(ranges, store.OffsetLen(2, 3), store.OffsetLen(2, 3), store.OffsetLen(0, 4))
	want = append(want, digits[2:5], digits[2:5], digits[:4])
	got, err := store.GetRanges(ctx, r, "digits", ranges)
	if err != nil {
		t.Fatalf("GetRanges: %v", err)
	}
	if len(got) != len(ranges) {
		t.Fatalf("GetRanges returned %d results for %d ranges", len(got), len(ranges))
	}
	for i := range ranges {
		if got[i] == nil || !bytes.Equal(got[i], want[i]) {
			t.Errorf("GetRanges result %d (%v) = %s, want %s", i, ranges[i], show(got[i]), show(want[i]))
		}
	}
	got, err = store.GetRanges(ctx, r, "digits", nil)
	if err != nil || len(got) != 0 {
		t.Errorf("GetRanges(no ranges) = %v, %v; want empty", got, err)
	}
	// Many scattered ranges of a large value.
	large := fixture()["large"]
	ranges, want = nil, nil
	for i := range 64 {
		off := int64((i * 7919 * 331) % len(large))
		n := int64(i * 97 % 5000)
		ranges = append(ranges, store.OffsetLen(off, n))
		want = append(want, large[off:min(off+n, int64(len(large)))])
	}
	got, err = store.GetRanges(ctx, r, "large", ranges)
	if err != nil {
		t.Fatalf("GetRanges(large): %v", err)
	}
	for i := range ranges {
		if !bytes.Equal(got[i], want[i]) {
			t.Errorf("GetRanges(large) result %d (%v) = %s, want %s", i, ranges[i], show(got[i]), show(want[i]))
		}
	}
}

func testReadInto(t *testing.T, r store.IntoReader) {
	ctx := context.Background()
	d := digits
	for _, tc := range []struct {
		off  int64
		n    int
		want []byte
	}{
		{0, 10, d}, {2, 3, d[2:5]}, {0, 0, nil}, {8, 5, d[8:]}, {9, 1, d[9:]},
		{10, 3, nil}, {20, 3, nil}, {0, 100, d},
	} {
		dst := bytes.Repeat([]byte{0xee}, tc.n)
		n, err := r.ReadInto(ctx, "digits", tc.off, dst)
		if err != nil {
			t.Errorf("ReadInto(digits, %d, [%d]): %v", tc.off, tc.n, err)
			continue
		}
		if !bytes.Equal(dst[:n], tc.want) {
			t.Errorf("ReadInto(digits, %d, [%d]) read %q, want %q", tc.off, tc.n, dst[:n], tc.want)
		}
	}
	large := fixture()["large"]
	dst := make([]byte, 1<<20)
	if n, err := r.ReadInto(ctx, "large", 12345, dst); err != nil || n != len(dst) || !bytes.Equal(dst, large[12345:12345+len(dst)]) {
		t.Errorf("ReadInto(large, 12345, 1 MiB) = %d, %v; bytes equal: %v", n, err, bytes.Equal(dst[:max(n, 0)], large[12345:12345+max(n, 0)]))
	}
	if n, err := r.ReadInto(ctx, "empty", 0, make([]byte, 4)); err != nil || n != 0 {
		t.Errorf("ReadInto(empty) = %d, %v; want 0, nil", n, err)
	}
	for _, key := range []string{"missing", "dir", "dir/a/b"} {
		_, err := r.ReadInto(ctx, key, 0, make([]byte, 4))
		checkKeyErr(t, fmt.Sprintf("ReadInto(%q)", key), err, store.ErrNotFound, key)
	}
	_, err := r.ReadInto(ctx, "digits", -1, make([]byte, 4))
	checkKeyErr(t, "ReadInto(digits, -1)", err, store.ErrInvalidRange, "digits")
	for _, key := range HostileKeys {
		if _, err := r.ReadInto(ctx, key, 0, make([]byte, 4)); !errors.Is(err, store.ErrInvalidKey) {
			t.Errorf("ReadInto(%q): err = %v, want ErrInvalidKey", key, err)
		}
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := r.ReadInto(cctx, "digits", 0, make([]byte, 4)); !errors.Is(err, context.Canceled) {
		t.Errorf("ReadInto with cancelled context: err = %v, want context.Canceled", err)
	}
}

// splitBufs returns buffers of the given lengths, cycling through them
// until they hold total bytes (the last one cut short), all filled with
// 0xee so bytes left unwritten show.
func splitBufs(total int, lengths ...int) [][]byte {
	var bufs [][]byte
	for i := 0; total > 0; i++ {
		n := min(lengths[i%len(lengths)], total)
		bufs = append(bufs, bytes.Repeat([]byte{0xee}, n))
		total -= n
	}
	return bufs
}

func testReadVec(t *testing.T, r store.VectorReader) {
	ctx := context.Background()
	large := fixture()["large"]
	for _, tc := range []struct {
		name    string
		key     string
		off     int64
		bufs    [][]byte
		want    []byte // the value's bytes from off that the read returns
		wantErr error
	}{
		{"one buffer", "digits", 0, splitBufs(10, 10), digits, nil},
		{"middle", "digits", 2, splitBufs(5, 2, 3), digits[2:7], nil},
		{"to the end", "digits", 7, splitBufs(3, 1), digits[7:], nil},
		{"empty buffers between", "digits", 1, [][]byte{{0xee, 0xee}, {}, {0xee}, nil, {0xee, 0xee, 0xee}}, digits[1:7], nil},
		{"no buffers", "digits", 4, nil, nil, nil},
		{"empty value, no bytes", "empty", 0, [][]byte{{}}, nil, nil},
		{"many small buffers", "large", 12345, splitBufs(1<<20, 1, 7, 3, 64, 2), large[12345 : 12345+1<<20], nil},
		{"more than 1024 buffers", "large", 999, splitBufs(3000*257, 257), large[999 : 999+3000*257], nil},
		{"more than 1024 buffers to the end", "large", 0, splitBufs(len(large), 1000, 3), large, nil},
		{"large buffers", "large", 1, splitBufs(len(large)-1, 1<<20), large[1:], nil},
		{"short value", "digits", 6, splitBufs(8, 3), digits[6:], io.ErrUnexpectedEOF},
		{"short value, sink byte", "digits", 0, [][]byte{bytes.Repeat([]byte{0xee}, 10), {0xee}}, digits, io.ErrUnexpectedEOF},
		{"short large value", "large", 100, splitBufs(len(large), 4096), large[100:], io.ErrUnexpectedEOF},
		{"offset at the end", "digits", 10, splitBufs(2, 1), nil, io.ErrUnexpectedEOF},
		{"offset past the end", "digits", 50, splitBufs(2, 1), nil, io.ErrUnexpectedEOF},
		{"empty value", "empty", 0, splitBufs(4, 4), nil, io.ErrUnexpectedEOF},
		{"missing key", "missing", 0, splitBufs(4, 4), nil, store.ErrNotFound},
		{"missing key, no bytes", "missing", 0, nil, nil, store.ErrNotFound},
		{"directory", "dir", 0, splitBufs(4, 4), nil, store.ErrNotFound},
		{"directory, no bytes", "dir", 0, nil, nil, store.ErrNotFound},
		{"below a value", "dir/a/b", 0, splitBufs(4, 4), nil, store.ErrNotFound},
		{"negative offset", "digits", -1, splitBufs(4, 4), nil, store.ErrInvalidRange},
	} {
		t.Run(tc.name, func(t *testing.T) {
			total := 0
			for _, b := range tc.bufs {
				total += len(b)
			}
			n, err := r.ReadVec(ctx, tc.key, tc.off, tc.bufs)
			if tc.wantErr != nil {
				checkKeyErr(t, "ReadVec", err, tc.wantErr, tc.key)
			} else if err != nil {
				t.Fatalf("ReadVec(%q, %d, %d bytes): %v", tc.key, tc.off, total, err)
			}
			if n != len(tc.want) {
				t.Errorf("ReadVec(%q, %d, %d bytes) = %d bytes, want %d", tc.key, tc.off, total, n, len(tc.want))
			}
			// Bytes up to n land in order; the rest stay untouched.
			got := bytes.Join(tc.bufs, nil)
			wantAll := append(append([]byte(nil), tc.want...), bytes.Repeat([]byte{0xee}, total-len(tc.want))...)
			if !bytes.Equal(got, wantAll) {
				i := 0
				for i < len(got) && i < len(wantAll) && got[i] == wantAll[i] {
					i++
				}
				t.Errorf("ReadVec(%q, %d, %d bytes): bytes differ from byte %d on: got %s, want %s", tc.key, tc.off, total, i, show(got[i:]), show(wantAll[i:]))
			}
		})
	}
	t.Run("short value says how many bytes", func(t *testing.T) {
		_, err := r.ReadVec(ctx, "digits", 6, splitBufs(8, 8))
		if err == nil || !strings.Contains(err.Error(), "4") {
			t.Errorf("ReadVec(digits, 6, 8 bytes): err = %v, want one that says 4 bytes were there", err)
		}
	})
	t.Run("hostile keys", func(t *testing.T) {
		for _, key := range HostileKeys {
			if _, err := r.ReadVec(ctx, key, 0, splitBufs(4, 4)); !errors.Is(err, store.ErrInvalidKey) {
				t.Errorf("ReadVec(%q): err = %v, want ErrInvalidKey", key, err)
			}
		}
	})
	t.Run("cancelled context", func(t *testing.T) {
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		bufs := splitBufs(4, 1)
		n, err := r.ReadVec(cctx, "digits", 0, bufs)
		checkKeyErr(t, "ReadVec with cancelled context", err, context.Canceled, "digits")
		if n != 0 || !bytes.Equal(bytes.Join(bufs, nil), []byte{0xee, 0xee, 0xee, 0xee}) {
			t.Errorf("ReadVec with cancelled context read %d bytes: %q", n, bytes.Join(bufs, nil))
		}
	})
	t.Run("concurrent", func(t *testing.T) {
		var wg sync.WaitGroup
		for g := range 8 {
			wg.Go(func() {
				for i := range 10 {
					off := (g*7919 + i*104729) % (len(large) - 70_000)
					bufs := splitBufs(70_000, 100+g, 13)
					if n, err := r.ReadVec(ctx, "large", int64(off), bufs); err != nil || n != 70_000 {
						t.Errorf("ReadVec(large, %d) = %d, %v", off, n, err)
						return
					}
					if !bytes.Equal(bytes.Join(bufs, nil), large[off:off+70_000]) {
						t.Errorf("ReadVec(large, %d) read wrong bytes", off)
						return
					}
				}
			})
		}
		wg.Wait()
	})
}

func testSize(t *testing.T, r store.SizeReader, contents map[string][]byte) {
	ctx := context.Background()
	for k, v := range contents {
		n, err := r.Size(ctx, k)
		if err != nil || n != int64(len(v)) {
			t.Errorf("Size(%q) = %d, %v; want %d", k, n, err, len(v))
		}
	}
	for _, key := range []string{"missing", "dir", "dir/a/b"} {
		_, err := r.Size(ctx, key)
		checkKeyErr(t, fmt.Sprintf("Size(%q)", key), err, store.ErrNotFound, key)
	}
	for _, key := range HostileKeys {
		if _, err := r.Size(ctx, key); !errors.Is(err, store.ErrInvalidKey) {
			t.Errorf("Size(%q): err = %v, want ErrInvalidKey", key, err)
		}
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := r.Size(cctx, "digits"); !errors.Is(err, context.Canceled) {
		t.Errorf("Size with cancelled context: err = %v, want context.Canceled", err)
	}
}

func testResultIsCallers(t *testing.T, r store.Reader) {
	ctx := context.Background()
	for _, br := range []store.ByteRange{store.Full(), store.OffsetLen(2, 3), store.Suffix(4)} {
		b, err := r.Get(ctx, "digits", br)
		if err != nil {
			t.Fatal(err)
		}
		for i := range b {
			b[i] = 'x'
		}
		_ = append(b[:len(b):len(b)], 'y')
	}
	got, err := store.GetRanges(ctx, r, "digits", []store.ByteRange{store.OffsetLen(0, 5), store.OffsetLen(5, 5)})
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range got {
		for i := range b {
			b[i] = 'z'
		}
	}
	mustGet(t, r, "digits", store.Full(), digits)
}

func testHostileRead(t *testing.T, r store.Reader) {
	ctx := context.Background()
	for _, key := range HostileKeys {
		for _, br := range []store.ByteRange{store.Full(), store.OffsetLen(0, 1), store.Suffix(1)} {
			got, err := r.Get(ctx, key, br)
			if !errors.Is(err, store.ErrInvalidKey) {
				t.Errorf("Get(%q, %v) = %s, %v; want ErrInvalidKey", key, br, show(got), err)
			}
		}
	}
	if l, ok := r.(store.Lister); ok {
		for _, p := range []string{"/", "..", "../", "a/../", "/abs", "a//", `a\`, "a\x00"} {
			var err error
			for _, e := range l.List(ctx, p) {
				if e != nil {
					err = e
					break
				}
			}
			if !errors.Is(err, store.ErrInvalidKey) {
				t.Errorf("List(%q): err = %v, want ErrInvalidKey", p, err)
			}
			if _, _, err := l.ListDir(ctx, p); !errors.Is(err, store.ErrInvalidKey) {
				t.Errorf("ListDir(%q): err = %v, want ErrInvalidKey", p, err)
			}
		}
	}
}

func testCancelledRead(t *testing.T, r store.Reader) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, br := range validRanges {
		if got, err := r.Get(ctx, "digits", br); !errors.Is(err, context.Canceled) {
			t.Errorf("Get(digits, %v) with cancelled context = %s, %v; want context.Canceled", br, show(got), err)
		}
	}
	if _, err := store.GetRanges(ctx, r, "digits", validRanges); !errors.Is(err, context.Canceled) {
		t.Errorf("GetRanges with cancelled context: err = %v, want context.Canceled", err)
	}
	if l, ok := r.(store.Lister); ok {
		var err error
		for _, e := range l.List(ctx, "") {
			if e != nil {
				err = e
				break
			}
		}
		if !errors.Is(err, context.Canceled) {
			t.Errorf("List with cancelled context: err = %v, want context.Canceled", err)
		}
		if _, _, err := l.ListDir(ctx, ""); !errors.Is(err, context.Canceled) {
			t.Errorf("ListDir with cancelled context: err = %v, want context.Canceled", err)
		}
	}
}

func testConcurrentRead(t *testing.T, r store.Reader) {
	ctx := context.Background()
	large := fixture()["large"]
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 20 {
				off := int64((g*131 + i*4099) % len(large))
				b, err := r.Get(ctx, "large", store.OffsetLen(off, 10_000))
				if err != nil {
					t.Errorf("Get(large): %v", err)
					return
				}
				if !bytes.Equal(b, large[off:min(off+10_000, int64(len(large)))]) {
					t.Errorf("Get(large, %d) returned wrong bytes", off)
					return
				}
				if b, err := r.Get(ctx, "digits", store.Suffix(3)); err != nil || string(b) != "789" {
					t.Errorf("Get(digits, Suffix(3)) = %q, %v", b, err)
					return
				}
			}
		})
	}
	wg.Wait()
}

// ListKeys returns the keys l lists below prefix, in the order listed,
// failing t on an error.
func ListKeys(t testing.TB, l store.Lister, prefix string) []string {
	t.Helper()
	keys, err := collect(context.Background(), l, prefix)
	if err != nil {
		t.Fatalf("List(%q): %v", prefix, err)
	}
	return keys
}

// collect drains a List iterator.
func collect(ctx context.Context, l store.Lister, prefix string) ([]string, error) {
	var keys []string
	for k, err := range l.List(ctx, prefix) {
		if err != nil {
			return keys, err
		}
		keys = append(keys, k)
	}
	return keys, nil
}

func testList(t *testing.T, l store.Lister, contents map[string][]byte) {
	ctx := context.Background()
	all := make([]string, 0, len(contents))
	for k := range contents {
		all = append(all, k)
	}
	slices.Sort(all)
	for _, prefix := range []string{"", "a", "a.", "c", "c/", "c/1", "c/1/", "c/0/1", "dir/", "dir/sub/", "dir/s", "digits", "z", "missing", "missing/", "zz/"} {
		var want []string
		for _, k := range all {
			if strings.HasPrefix(k, prefix) {
				want = append(want, k)
			}
		}
		got, err := collect(ctx, l, prefix)
		if err != nil {
			t.Errorf("List(%q): %v", prefix, err)
			continue
		}
		if !slices.Equal(got, want) {
			t.Errorf("List(%q) = %q, want %q", prefix, got, want)
		}
	}
	// Stopping early is honoured.
	n := 0
	for range l.List(ctx, "") {
		n++
		if n == 2 {
			break
		}
	}
	if n != 2 {
		t.Errorf("List stopped after %d keys, want 2", n)
	}
}

func testListDir(t *testing.T, l store.Lister) {
	ctx := context.Background()
	for _, tc := range []struct {
		dir        string
		keys, dirs []string
	}{
		{"", []string{"a.txt", "ab", "digits", "empty", "large", "odd name-é.bin", "zarr.json"}, []string{"c/", "dir/"}},
		{"c/", []string{"10"}, []string{"0/", "1/"}},
		{"c/0/", []string{"0", "1"}, nil},
		{"dir/", []string{"a"}, []string{"sub/"}},
		{"dir/sub/", []string{"b"}, nil},
		{"missing/", nil, nil},
		{"digits/", nil, nil},
	} {
		keys, dirs, err := l.ListDir(ctx, tc.dir)
		if err != nil {
			t.Errorf("ListDir(%q): %v", tc.dir, err)
			continue
		}
		if !slices.Equal(keys, tc.keys) || !slices.Equal(dirs, tc.dirs) {
			t.Errorf("ListDir(%q) = %q, %q; want %q, %q", tc.dir, keys, dirs, tc.keys, tc.dirs)
		}
	}
}

func testSetOverwrite(t *testing.T, s store.Store) {
	ctx := context.Background()
	steps := [][]byte{[]byte("first value"), []byte("2nd"), {}, []byte("a longer fourth value"), pattern(70_000, 3), []byte("x")}
	for i, v := range steps {
		if err := s.Set(ctx, "k/v", v); err != nil {
			t.Fatalf("Set step %d: %v", i, err)
		}
		mustGet(t, s, "k/v", store.Full(), v)
		mustGet(t, s, "k/v", store.Suffix(2), v[max(len(v)-2, 0):])
	}
	keys, err := collect(ctx, s, "")
	if err != nil || !slices.Equal(keys, []string{"k/v"}) {
		t.Errorf("List after overwrites = %q, %v; want [k/v]", keys, err)
	}
}

func testSetCopies(t *testing.T, s store.Store) {
	ctx := context.Background()
	v := []byte("original")
	if err := s.Set(ctx, "k", v); err != nil {
		t.Fatal(err)
	}
	copy(v, "mutated!")
	mustGet(t, s, "k", store.Full(), []byte("original"))
}

func testDelete(t *testing.T, s store.Store) {
	ctx := context.Background()
	for _, k := range []string{"a/b/c", "a/b/d", "a/e", "f"} {
		if err := s.Set(ctx, k, []byte(k)); err != nil {
			t.Fatal(err)
		}
	}
	for _, k := range []string{"a/b/c", "f"} {
		if err := s.Delete(ctx, k); err != nil {
			t.Fatalf("Delete(%q): %v", k, err)
		}
		_, err := s.Get(ctx, k, store.Full())
		checkKeyErr(t, fmt.Sprintf("Get(%q) after Delete", k), err, store.ErrNotFound, k)
	}
	// Missing keys, directories and paths below values are all fine to delete.
	for _, k := range []string{"a/b/c", "missing", "a/b", "a", "a/e/x", "x/y/z"} {
		if err := s.Delete(ctx, k); err != nil {
			t.Errorf("Delete(%q) of a missing key: %v", k, err)
		}
	}
	keys, err := collect(ctx, s, "")
	if want := []string{"a/b/d", "a/e"}; err != nil || !slices.Equal(keys, want) {
		t.Errorf("List after deletes = %q, %v; want %q", keys, err, want)
	}
	mustGet(t, s, "a/b/d", store.Full(), []byte("a/b/d"))
	for _, k := range []string{"a/b/d", "a/e"} {
		if err := s.Delete(ctx, k); err != nil {
			t.Fatal(err)
		}
	}
	if keys, dirs, err := s.ListDir(ctx, ""); err != nil || len(keys)+len(dirs) != 0 {
		t.Errorf("ListDir after deleting everything = %q, %q, %v; want empty", keys, dirs, err)
	}
	// A deleted key can be written again.
	if err := s.Set(ctx, "a/b/c", []byte("again")); err != nil {
		t.Fatal(err)
	}
	mustGet(t, s, "a/b/c", store.Full(), []byte("again"))
}

func testHostileWrite(t *testing.T, s store.Store) {
	ctx := context.Background()
	if err := s.Set(ctx, "ok", []byte("ok")); err != nil {
		t.Fatal(err)
	}
	for _, key := range HostileKeys {
		if err := s.Set(ctx, key, []byte("evil")); !errors.Is(err, store.ErrInvalidKey) {
			t.Errorf("Set(%q): err = %v, want ErrInvalidKey", key, err)
		}
		if err := s.Delete(ctx, key); !errors.Is(err, store.ErrInvalidKey) {
			t.Errorf("Delete(%q): err = %v, want ErrInvalidKey", key, err)
		}
		if got, err := s.Get(ctx, key, store.Full()); !errors.Is(err, store.ErrInvalidKey) {
			t.Errorf("Get(%q) = %s, %v; want ErrInvalidKey", key, show(got), err)
		}
	}
	keys, err := collect(ctx, s, "")
	if err != nil || !slices.Equal(keys, []string{"ok"}) {
		t.Errorf("List after hostile writes = %q, %v; want [ok]", keys, err)
	}
	mustGet(t, s, "ok", store.Full(), []byte("ok"))
}

// versionValue is version v of a value in the concurrency test: its length
// and every byte depend on v, so a torn or short read is detectable.
func versionValue(v int) []byte {
	return bytes.Repeat([]byte{byte(v)}, 1000+v*997)
}

func testConcurrent(t *testing.T, s store.Store) {
	ctx := context.Background()
	const versions = 12
	keys := []string{"shared/a", "shared/b"}
	for _, k := range keys {
		if err := s.Set(ctx, k, versionValue(0)); err != nil {
			t.Fatal(err)
		}
	}
	check := func(key string, b []byte, whole bool) error {
		if len(b) == 0 {
			return fmt.Errorf("Get(%q) returned an empty value", key)
		}
		v := int(b[0])
		if v >= versions {
			return fmt.Errorf("Get(%q) returned unknown version %d", key, v)
		}
		if whole && len(b) != len(versionValue(v)) {
			return fmt.Errorf("Get(%q) returned %d bytes of version %d, want %d", key, len(b), v, len(versionValue(v)))
		}
		if bytes.IndexFunc(b, func(r rune) bool { return r != rune(v) }) >= 0 {
			return fmt.Errorf("Get(%q) mixed versions (starts with %d)", key, v)
		}
		return nil
	}
	var wg sync.WaitGroup
	for w := range 2 {
		wg.Go(func() {
			for i := 1; i < versions; i++ {
				for _, k := range keys {
					if err := s.Set(ctx, k, versionValue((i+w)%versions)); err != nil {
						t.Errorf("Set(%q): %v", k, err)
						return
					}
				}
				// Writers of unrelated keys alongside.
				k := fmt.Sprintf("own/%d/%d", w, i)
				if err := s.Set(ctx, k, []byte(k)); err != nil {
					t.Errorf("Set(%q): %v", k, err)
					return
				}
			}
		})
	}
	for r := range 4 {
		wg.Go(func() {
			for i := range 40 {
				k := keys[(r+i)%len(keys)]
				b, err := s.Get(ctx, k, store.Full())
				if err == nil {
					err = check(k, b, true)
				}
				if err == nil {
					b, err = s.Get(ctx, k, store.Suffix(500))
					if err == nil && len(b) != 500 {
						err = fmt.Errorf("Get(%q, Suffix(500)) returned %d bytes", k, len(b))
					}
					if err == nil {
						err = check(k, b, false)
					}
				}
				if err != nil {
					t.Error(err)
					return
				}
				if i%10 == 0 {
					if _, err := collect(ctx, s, "own/"); err != nil {
						t.Errorf("List during writes: %v", err)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	got, err := collect(ctx, s, "own/")
	if err != nil || len(got) != 2*(versions-1) {
		t.Errorf("List(own/) after concurrent writes = %d keys, %v; want %d", len(got), err, 2*(versions-1))
	}
}

func testCancelledWrite(t *testing.T, s store.Store) {
	bg := context.Background()
	if err := s.Set(bg, "kept", []byte("old")); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(bg)
	cancel()
	if err := s.Set(ctx, "new/key", []byte("v")); !errors.Is(err, context.Canceled) {
		t.Errorf("Set with cancelled context: err = %v, want context.Canceled", err)
	}
	if err := s.Set(ctx, "kept", []byte("new")); !errors.Is(err, context.Canceled) {
		t.Errorf("Set(kept) with cancelled context: err = %v, want context.Canceled", err)
	}
	if err := s.Delete(ctx, "kept"); !errors.Is(err, context.Canceled) {
		t.Errorf("Delete with cancelled context: err = %v, want context.Canceled", err)
	}
	_, err := s.Get(bg, "new/key", store.Full())
	checkKeyErr(t, "Get after cancelled Set", err, store.ErrNotFound, "new/key")
	mustGet(t, s, "kept", store.Full(), []byte("old"))
	keys, err := collect(bg, s, "")
	if err != nil || !slices.Equal(keys, []string{"kept"}) {
		t.Errorf("List after cancelled writes = %q, %v; want [kept]", keys, err)
	}
}

func testLarge(t *testing.T, s store.Store) {
	ctx := context.Background()
	v := pattern(5<<20+3, 7)
	if err := s.Set(ctx, "big/value", v); err != nil {
		t.Fatal(err)
	}
	mustGet(t, s, "big/value", store.Full(), v)
	mustGet(t, s, "big/value", store.OffsetLen(3<<20, 1<<20), v[3<<20:4<<20])
	mustGet(t, s, "big/value", store.From(5<<20), v[5<<20:])
	mustGet(t, s, "big/value", store.Suffix(1<<20), v[len(v)-1<<20:])
	if sr, ok := s.(store.SizeReader); ok {
		if n, err := sr.Size(ctx, "big/value"); err != nil || n != int64(len(v)) {
			t.Errorf("Size(big/value) = %d, %v; want %d", n, err, len(v))
		}
	}
}

func testListAfterWrites(t *testing.T, s store.Store) {
	ctx := context.Background()
	contents := fixture()
	delete(contents, "large")
	for k, v := range contents {
		if err := s.Set(ctx, k, v); err != nil {
			t.Fatalf("Set(%q): %v", k, err)
		}
	}
	contents["large"] = nil
	if err := s.Set(ctx, "large", []byte("small now")); err != nil {
		t.Fatal(err)
	}
	testList(t, s, contents)
	testListDir(t, s)
}

// BenchmarkStore runs the shared read benchmarks against s, which must
// accept writes: Get of the whole of a 1 MiB value, of a 64 KiB range in
// its middle, and of a 16 KiB suffix (a shard index read), plus ReadInto of
// 64 KiB when s implements store.IntoReader. It writes the key
// "storetest-bench/value".
func BenchmarkStore(b *testing.B, s store.Store) {
	ctx := context.Background()
	const key = "storetest-bench/value"
	v := pattern(1<<20, 11)
	if err := s.Set(ctx, key, v); err != nil {
		b.Fatal(err)
	}
	bench := func(name string, r store.ByteRange, n int) {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(n))
			b.ReportAllocs()
			for b.Loop() {
				got, err := s.Get(ctx, key, r)
				if err != nil || len(got) != n {
					b.Fatalf("Get(%v) = %d bytes, %v", r, len(got), err)
				}
			}
		})
	}
	bench("GetFull", store.Full(), 1<<20)
	bench("GetRange64K", store.OffsetLen(512<<10, 64<<10), 64<<10)
	bench("GetSuffix16K", store.Suffix(16<<10), 16<<10)
	if ir, ok := s.(store.IntoReader); ok {
		b.Run("ReadInto64K", func(b *testing.B) {
			dst := make([]byte, 64<<10)
			b.SetBytes(int64(len(dst)))
			b.ReportAllocs()
			for b.Loop() {
				if n, err := ir.ReadInto(ctx, key, 512<<10, dst); err != nil || n != len(dst) {
					b.Fatalf("ReadInto = %d, %v", n, err)
				}
			}
		})
	}
}

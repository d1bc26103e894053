package storetest

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/gozarr/gozarr/store"
)

// FuzzRange returns the ByteRange a fuzz target's (kind, off, n) inputs
// select: kind%4 picks Full, Range(off, n), From(off) or Suffix(n). The
// range may be invalid (negative values); backends must refuse those.
func FuzzRange(kind uint8, off, n int64) store.ByteRange {
	switch kind % 4 {
	case 1:
		return store.OffsetLen(off, n)
	case 2:
		return store.From(off)
	case 3:
		return store.Suffix(n)
	}
	return store.Full()
}

// CheckFuzzedRead is the body of a backend fuzz target that feeds the
// backend hostile answers (a remote server's status, headers, body): it
// reads key with Get(FuzzRange(kind, off, n)) and, if r is a
// store.IntoReader and off and n are valid (n up to 64 KiB), with
// ReadInto(off, [n]byte). Errors are fine; what a call accepts must be a
// non-nil slice no longer than the range asks for, or a count within the
// buffer, else t fails. It must not panic, and is safe for concurrent use
// if r is.
func CheckFuzzedRead(t *testing.T, r store.Reader, key string, kind uint8, off, n int64) {
	t.Helper()
	ctx := context.Background()
	br := FuzzRange(kind, off, n)
	got, err := r.Get(ctx, key, br)
	if err == nil {
		if got == nil {
			t.Fatalf("Get(%v) returned nil bytes without error", br)
		}
		if o, l, ok := br.Bounded(); ok && o >= 0 && l >= 0 && int64(len(got)) > l {
			t.Fatalf("Get(%v) returned %d bytes", br, len(got))
		}
		if l, ok := br.IsSuffix(); ok && l >= 0 && int64(len(got)) > l {
			t.Fatalf("Get(%v) returned %d bytes", br, len(got))
		}
	}
	ir, ok := r.(store.IntoReader)
	if !ok || off < 0 || n < 0 || n > 1<<16 {
		return
	}
	dst := make([]byte, n)
	k, err := ir.ReadInto(ctx, key, off, dst)
	if err == nil && (k < 0 || k > len(dst)) {
		t.Fatalf("ReadInto(%d, [%d]) = %d", off, n, k)
	}
}

// NoHang runs call and returns its error, failing t if call has not
// returned after a minute: for tests of inputs that used to block forever
// (a FIFO, a server that never answers), so that the test names the call
// that blocks instead of timing out as a whole. It asserts no timing: a
// minute is far beyond any correct run.
func NoHang(t testing.TB, what string, call func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- call() }()
	timer := time.NewTimer(time.Minute)
	defer timer.Stop()
	select {
	case err := <-done:
		return err
	case <-timer.C:
		t.Fatalf("%s blocked", what)
		return nil
	}
}

// FuzzRanges decodes up to 8 ranges from a fuzz target's bytes, five per
// range: a kind (Full, Range, From, Suffix, as FuzzRange), an offset and a
// length of two bytes each, little-endian, so that they fall in and around
// a value of up to 64 KiB.
func FuzzRanges(data []byte) []store.ByteRange {
	var out []store.ByteRange
	for len(data) >= 5 && len(out) < 8 {
		off := int64(data[1]) | int64(data[2])<<8
		n := int64(data[3]) | int64(data[4])<<8
		out = append(out, FuzzRange(data[0], off, n))
		data = data[5:]
	}
	return out
}

// CheckRanges fails t unless got, the answer of a GetRanges of ranges of
// value, is the exact bytes each range selects (see store.ByteRange for
// clamping). It reports whether it did not fail.
func CheckRanges(t testing.TB, value []byte, ranges []store.ByteRange, got [][]byte) bool {
	t.Helper()
	if len(got) != len(ranges) {
		t.Errorf("GetRanges of %d ranges returned %d results", len(ranges), len(got))
		return false
	}
	for i, r := range ranges {
		start, end, err := r.Resolve(int64(len(value)))
		if err != nil || got[i] == nil || !bytes.Equal(got[i], value[start:end]) {
			t.Errorf("GetRanges: range %d (%v) = %d bytes, want [%d, %d) of %d", i, r, len(got[i]), start, end, len(value))
			return false
		}
	}
	return true
}

package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/iotest"
)

func TestCheckContentRange(t *testing.T) {
	tests := []struct {
		cr   string
		r    ByteRange
		n    int
		fail bool
	}{
		{"bytes 2-4/10", OffsetLen(2, 3), 3, false},
		{"bytes 2-4/*", OffsetLen(2, 3), 3, false},
		{"bytes 2-4/5", OffsetLen(2, 10), 3, false}, // clamped at the end
		{"bytes 7-9/10", Suffix(3), 3, false},
		{"bytes 0-2/3", Suffix(10), 3, false}, // suffix longer than the value
		{"bytes 5-9/10", From(5), 5, false},
		{"bytes 0-9/10", Full(), 10, false},
		{"anything", OffsetLen(0, 5), 0, false}, // empty answers are not checked
		{"", OffsetLen(0, 5), 5, true},
		{"items 0-4/10", OffsetLen(0, 5), 5, true},
		{"bytes 0-4", OffsetLen(0, 5), 5, true},
		{"bytes 04/10", OffsetLen(0, 5), 5, true},
		{"bytes a-4/10", OffsetLen(0, 5), 5, true},
		{"bytes 4-0/10", OffsetLen(0, 5), 5, true},
		{"bytes 0-99999999999999999999/1", OffsetLen(0, 5), 5, true},
		{"bytes 0-4/10", OffsetLen(0, 5), 4, true},  // length disagrees with the body
		{"bytes 1-5/10", OffsetLen(0, 5), 5, true},  // wrong start
		{"bytes 0-5/10", OffsetLen(0, 5), 6, true},  // more than asked for
		{"bytes 0-4/4", OffsetLen(0, 5), 5, true},   // last byte past total
		{"bytes 6-9/10", Suffix(3), 4, true},        // longer than the suffix
		{"bytes 6-8/10", Suffix(3), 3, true},        // not the end of the value
		{"bytes 4-8/10", From(5), 5, true},          // wrong start
		{"bytes 1-9/10", Full(), 9, true},           // a Full read starts at 0
		{"bytes 0-2/10", OffsetLen(-1, 3), 3, true}, // invalid range never matches
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%s %v %d", tc.cr, tc.r, tc.n), func(t *testing.T) {
			err := CheckContentRange(tc.cr, tc.r, tc.n)
			if tc.fail != (err != nil) {
				t.Fatalf("err = %v, want failure %v", err, tc.fail)
			}
			if err != nil && !errors.Is(err, ErrBadContentRange) {
				t.Fatalf("err = %v, not ErrBadContentRange", err)
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
		r := [...]ByteRange{Full(), OffsetLen(off, n), From(off), Suffix(n)}[kind%4]
		if CheckContentRange(cr, r, got) != nil || got <= 0 {
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
		in    ByteRange
		want  ByteRange
		empty bool
	}{
		{Full(), Full(), false},
		{From(0), Full(), false},
		{From(3), From(3), false},
		{OffsetLen(5, 0), OffsetLen(5, 0), true},
		{OffsetLen(0, 0), OffsetLen(0, 0), true},
		{OffsetLen(5, 1), OffsetLen(5, 1), false},
		{Suffix(0), Suffix(0), true},
		{Suffix(2), Suffix(2), false},
	}
	for _, tc := range tests {
		got, empty := RequestRange(tc.in)
		if got != tc.want || empty != tc.empty {
			t.Errorf("RequestRange(%v) = %v, %v; want %v, %v", tc.in, got, empty, tc.want, tc.empty)
		}
	}
}

func TestSliceWhole(t *testing.T) {
	b := []byte("0123456789")
	tests := []struct {
		r    ByteRange
		want string
	}{
		{Full(), "0123456789"},
		{OffsetLen(2, 3), "234"},
		{OffsetLen(8, 100), "89"},
		{OffsetLen(20, 5), ""},
		{From(7), "789"},
		{Suffix(3), "789"},
		{Suffix(30), "0123456789"},
	}
	for _, tc := range tests {
		got, err := SliceWhole(b, tc.r)
		if err != nil || string(got) != tc.want {
			t.Errorf("SliceWhole(%v) = %q, %v; want %q", tc.r, got, err, tc.want)
		}
		if got == nil || len(got) != cap(got) {
			t.Errorf("SliceWhole(%v): nil %v, spare capacity %d", tc.r, got == nil, cap(got)-len(got))
		}
	}
	if _, err := SliceWhole(b, OffsetLen(-1, 2)); !errors.Is(err, ErrInvalidRange) {
		t.Errorf("negative range: %v", err)
	}
}

func TestReadBody(t *testing.T) {
	data := bytes.Repeat([]byte("abcdefgh"), 1000)
	tests := []struct {
		name    string
		body    io.Reader
		size    int64
		want    []byte
		wantErr error
	}{
		{"sized", bytes.NewReader(data), int64(len(data)), data, nil},
		{"unknown size", iotest.HalfReader(bytes.NewReader(data)), -1, data, nil},
		{"size beyond the trusted cap", bytes.NewReader(data), maxSizedBody + 1, data, nil},
		{"short body", bytes.NewReader(data[:10]), 20, nil, io.ErrUnexpectedEOF},
		{"empty sized", bytes.NewReader(nil), 0, []byte{}, nil},
		{"empty unknown", bytes.NewReader(nil), -1, []byte{}, nil},
		{"broken", iotest.ErrReader(io.ErrClosedPipe), -1, nil, io.ErrClosedPipe},
	}
	for _, tc := range tests {
		got, err := ReadBody(tc.body, tc.size)
		if !errors.Is(err, tc.wantErr) {
			t.Errorf("%s: err = %v, want %v", tc.name, err, tc.wantErr)
			continue
		}
		if tc.wantErr == nil && (got == nil || !bytes.Equal(got, tc.want)) {
			t.Errorf("%s: got %d bytes (nil %v), want %d", tc.name, len(got), got == nil, len(tc.want))
		}
	}
}

func TestValidateRequest(t *testing.T) {
	if err := ValidateRequest("get", "a/b", Full(), OffsetLen(1, 2)); err != nil {
		t.Errorf("valid request: %v", err)
	}
	if err := ValidateRequest("get", "a//b", OffsetLen(-1, 2)); !errors.Is(err, ErrInvalidKey) {
		t.Errorf("bad key (checked first): %v", err)
	}
	err := ValidateRequest("read", "k", OffsetLen(0, 1), Suffix(-2))
	var ke *KeyError
	if !errors.Is(err, ErrInvalidRange) || !errors.As(err, &ke) || ke.Op != "read" || ke.Key != "k" {
		t.Errorf("bad range: %v", err)
	}
}

// recordingGetter serves a value and records the ranges asked for; it is
// safe for concurrent use.
type recordingGetter struct {
	value []byte
	fail  ByteRange // answered with errFail
	mu    sync.Mutex
	gets  []string
}

var errFail = errors.New("injected failure")

func (g *recordingGetter) get(ctx context.Context, key string, r ByteRange) ([]byte, error) {
	g.mu.Lock()
	g.gets = append(g.gets, r.String())
	g.mu.Unlock()
	if key != "k" {
		return nil, &KeyError{Op: "get", Key: key, Err: ErrNotFound}
	}
	if r == g.fail {
		return nil, errFail
	}
	return SliceWhole(bytes.Clone(g.value), r)
}

func TestGetRangesConcurrent(t *testing.T) {
	value := make([]byte, 1000)
	for i := range value {
		value[i] = byte(i * 7)
	}
	ranges := []ByteRange{OffsetLen(500, 10), Suffix(4), OffsetLen(0, 10), OffsetLen(5, 10), OffsetLen(990, 50), Full(), OffsetLen(2000, 5), From(996), OffsetLen(510, 0)}
	want := [][]byte{value[500:510], value[996:], value[0:10], value[5:15], value[990:], value, {}, value[996:], {}}
	g := &recordingGetter{value: value, fail: OffsetLen(-5, 0)}
	got, err := GetRangesConcurrent(context.Background(), "k", ranges, CoalesceOptions{MaxGap: 100}, g.get)
	if err != nil {
		t.Fatal(err)
	}
	for i := range want {
		if got[i] == nil || !bytes.Equal(got[i], want[i]) {
			t.Errorf("range %d (%v) = %v, want %v", i, ranges[i], got[i], want[i])
		}
	}
	// 3 unbounded gets plus 4 groups, in any order.
	wantGets := []string{"bytes=-4", "full", "bytes=996-", "bytes=0-14", "bytes=500-509", "bytes=990-1039", "bytes=2000-2004"}
	slices.Sort(g.gets)
	slices.Sort(wantGets)
	if !reflect.DeepEqual(g.gets, wantGets) {
		t.Errorf("gets = %v, want %v", g.gets, wantGets)
	}

	// One request runs without goroutines; errors come back unchanged.
	g = &recordingGetter{value: value, fail: OffsetLen(0, 10)}
	if _, err := GetRangesConcurrent(context.Background(), "k", []ByteRange{OffsetLen(0, 10)}, CoalesceOptions{}, g.get); !errors.Is(err, errFail) {
		t.Errorf("single failing get: %v", err)
	}
	if _, err := GetRangesConcurrent(context.Background(), "k", []ByteRange{Full(), OffsetLen(0, 10)}, CoalesceOptions{}, g.get); !errors.Is(err, errFail) {
		t.Errorf("one of two gets failing: %v", err)
	}
	if _, err := GetRangesConcurrent(context.Background(), "missing", []ByteRange{Full(), Suffix(1)}, CoalesceOptions{}, g.get); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing key: %v", err)
	}
	// Arguments are checked before any get.
	g = &recordingGetter{value: value}
	if _, err := GetRangesConcurrent(context.Background(), "k", []ByteRange{Full(), OffsetLen(-1, 2)}, CoalesceOptions{}, g.get); !errors.Is(err, ErrInvalidRange) {
		t.Errorf("negative range: %v", err)
	}
	if _, err := GetRangesConcurrent(context.Background(), "/k", []ByteRange{Full()}, CoalesceOptions{}, g.get); !errors.Is(err, ErrInvalidKey) {
		t.Errorf("bad key: %v", err)
	}
	if len(g.gets) != 0 {
		t.Errorf("gets %v for invalid arguments", g.gets)
	}
	// No ranges, no gets.
	if got, err := GetRangesConcurrent(context.Background(), "k", nil, CoalesceOptions{}, g.get); err != nil || len(got) != 0 || len(g.gets) != 0 {
		t.Errorf("no ranges: %v, %v, gets %v", got, err, g.gets)
	}
}

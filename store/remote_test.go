package store

import (
	"bytes"
	"context"
	"errors"
	"reflect"
	"slices"
	"sync"
	"testing"
)

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
	start, end, err := r.Resolve(int64(len(g.value)))
	if err != nil {
		return nil, err
	}
	return bytes.Clone(g.value[start:end]), nil
}

func TestGetRangesConcurrent(t *testing.T) {
	value := make([]byte, 1000)
	for i := range value {
		value[i] = byte(i * 7)
	}
	ranges := []ByteRange{OffsetLen(500, 10), Suffix(4), OffsetLen(0, 10), OffsetLen(5, 10), OffsetLen(990, 50), Full(), OffsetLen(2000, 5), From(996), OffsetLen(510, 0)}
	want := [][]byte{value[500:510], value[996:], value[0:10], value[5:15], value[990:], value, {}, value[996:], {}}
	g := &recordingGetter{value: value, fail: OffsetLen(-5, 0)}
	got, err := GetRangesConcurrent(context.Background(), "k", ranges, CoalesceOptions{MaxGap: 100}, 0, g.get)
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
	if _, err := GetRangesConcurrent(context.Background(), "k", []ByteRange{OffsetLen(0, 10)}, CoalesceOptions{}, 0, g.get); !errors.Is(err, errFail) {
		t.Errorf("single failing get: %v", err)
	}
	if _, err := GetRangesConcurrent(context.Background(), "k", []ByteRange{Full(), OffsetLen(0, 10)}, CoalesceOptions{}, 0, g.get); !errors.Is(err, errFail) {
		t.Errorf("one of two gets failing: %v", err)
	}
	if _, err := GetRangesConcurrent(context.Background(), "missing", []ByteRange{Full(), Suffix(1)}, CoalesceOptions{}, 0, g.get); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing key: %v", err)
	}
	// Arguments are checked before any get.
	g = &recordingGetter{value: value}
	if _, err := GetRangesConcurrent(context.Background(), "k", []ByteRange{Full(), OffsetLen(-1, 2)}, CoalesceOptions{}, 0, g.get); !errors.Is(err, ErrInvalidRange) {
		t.Errorf("negative range: %v", err)
	}
	if _, err := GetRangesConcurrent(context.Background(), "/k", []ByteRange{Full()}, CoalesceOptions{}, 0, g.get); !errors.Is(err, ErrInvalidKey) {
		t.Errorf("bad key: %v", err)
	}
	if len(g.gets) != 0 {
		t.Errorf("gets %v for invalid arguments", g.gets)
	}
	// No ranges, no gets.
	if got, err := GetRangesConcurrent(context.Background(), "k", nil, CoalesceOptions{}, 0, g.get); err != nil || len(got) != 0 || len(g.gets) != 0 {
		t.Errorf("no ranges: %v, %v, gets %v", got, err, g.gets)
	}
}

// TestGetRangesConcurrentBounded: 40 groups under a limit of 3 never have
// more than 3 gets (goroutines) in flight.
func TestGetRangesConcurrentBounded(t *testing.T) {
	var mu sync.Mutex
	inFlight, peak := 0, 0
	get := func(ctx context.Context, key string, r ByteRange) ([]byte, error) {
		mu.Lock()
		inFlight++
		peak = max(peak, inFlight)
		mu.Unlock()
		defer func() { mu.Lock(); inFlight--; mu.Unlock() }()
		_, n, _ := r.Bounded()
		return make([]byte, n), nil
	}
	var ranges []ByteRange
	for i := range 40 {
		ranges = append(ranges, OffsetLen(int64(i)*1000, 10))
	}
	got, err := GetRangesConcurrent(context.Background(), "k", ranges, CoalesceOptions{MaxGap: -1}, 3, get)
	if err != nil || len(got) != 40 {
		t.Fatalf("%d results, %v", len(got), err)
	}
	if peak > 3 || peak < 1 {
		t.Errorf("%d gets in flight at once, want at most 3", peak)
	}
}

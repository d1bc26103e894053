package store

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"math"
	"reflect"
	"testing"
)

func TestCoalesce(t *testing.T) {
	tight := CoalesceOptions{MaxGap: -1, MaxSize: -1}
	tests := []struct {
		name  string
		spans []Span
		opt   CoalesceOptions
		want  []Group
	}{
		{"empty", nil, CoalesceOptions{}, nil},
		{"single", []Span{{10, 5}}, CoalesceOptions{}, []Group{{Span{10, 5}, []int{0}}}},
		{"adjacent", []Span{{0, 10}, {10, 10}, {20, 5}}, tight,
			[]Group{{Span{0, 25}, []int{0, 1, 2}}}},
		{"overlapping", []Span{{0, 10}, {5, 10}, {12, 1}}, tight,
			[]Group{{Span{0, 15}, []int{0, 1, 2}}}},
		{"repeated", []Span{{4, 4}, {4, 4}, {4, 4}}, tight,
			[]Group{{Span{4, 4}, []int{0, 1, 2}}}},
		{"contained", []Span{{0, 100}, {10, 5}, {90, 10}}, tight,
			[]Group{{Span{0, 100}, []int{0, 1, 2}}}},
		{"gap not joined when MaxGap negative", []Span{{0, 10}, {11, 10}}, tight,
			[]Group{{Span{0, 10}, []int{0}}, {Span{11, 10}, []int{1}}}},
		{"gap below threshold", []Span{{0, 10}, {15, 10}}, CoalesceOptions{MaxGap: 5},
			[]Group{{Span{0, 25}, []int{0, 1}}}},
		{"gap above threshold", []Span{{0, 10}, {16, 10}}, CoalesceOptions{MaxGap: 5},
			[]Group{{Span{0, 10}, []int{0}}, {Span{16, 10}, []int{1}}}},
		{"default gap joins 64 KiB", []Span{{0, 1}, {1 + DefaultMaxGap, 1}}, CoalesceOptions{},
			[]Group{{Span{0, 2 + DefaultMaxGap}, []int{0, 1}}}},
		{"default gap refuses 64 KiB + 1", []Span{{0, 1}, {2 + DefaultMaxGap, 1}}, CoalesceOptions{},
			[]Group{{Span{0, 1}, []int{0}}, {Span{2 + DefaultMaxGap, 1}, []int{1}}}},
		{"size limit", []Span{{0, 40}, {40, 40}, {80, 40}, {120, 40}}, CoalesceOptions{MaxSize: 100},
			[]Group{{Span{0, 80}, []int{0, 1}}, {Span{80, 80}, []int{2, 3}}}},
		{"size limit exact", []Span{{0, 50}, {50, 50}}, CoalesceOptions{MaxSize: 100},
			[]Group{{Span{0, 100}, []int{0, 1}}}},
		{"single span over size limit", []Span{{0, 10}, {10, 500}, {510, 10}}, CoalesceOptions{MaxSize: 100},
			[]Group{{Span{0, 10}, []int{0}}, {Span{10, 500}, []int{1}}, {Span{510, 10}, []int{2}}}},
		{"contained span joins oversized group", []Span{{0, 500}, {100, 10}}, CoalesceOptions{MaxSize: 100},
			[]Group{{Span{0, 500}, []int{0, 1}}}},
		{"overlap split by size limit", []Span{{0, 80}, {50, 80}}, CoalesceOptions{MaxSize: 100},
			[]Group{{Span{0, 80}, []int{0}}, {Span{50, 80}, []int{1}}}},
		{"unsorted input", []Span{{300, 10}, {0, 10}, {100, 10}, {10, 10}}, CoalesceOptions{MaxGap: 50},
			[]Group{{Span{0, 20}, []int{1, 3}}, {Span{100, 10}, []int{2}}, {Span{300, 10}, []int{0}}}},
		{"zero-length spans", []Span{{5, 0}, {0, 5}, {100, 0}, {100, 0}}, tight,
			[]Group{{Span{0, 5}, []int{1, 0}}, {Span{100, 0}, []int{2, 3}}}},
		{"zero-length span inside gap", []Span{{0, 10}, {15, 0}, {20, 10}}, CoalesceOptions{MaxGap: 5},
			[]Group{{Span{0, 30}, []int{0, 1, 2}}}},
		{"huge gap option does not overflow", []Span{{0, 1}, {math.MaxInt64 - 1, 1}}, CoalesceOptions{MaxGap: math.MaxInt64, MaxSize: -1},
			[]Group{{Span{0, math.MaxInt64}, []int{0, 1}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Coalesce(tt.spans, tt.opt)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Coalesce(%v) =\n %v\nwant\n %v", tt.spans, got, tt.want)
			}
			checkCoalesce(t, tt.spans, tt.opt, got)
		})
	}
}

func TestCoalesceInvalid(t *testing.T) {
	for _, spans := range [][]Span{
		{{-1, 4}},
		{{0, 4}, {4, -1}},
		{{math.MaxInt64, 1}},
	} {
		if g, err := Coalesce(spans, CoalesceOptions{}); !errors.Is(err, ErrInvalidRange) {
			t.Errorf("Coalesce(%v) = %v, %v; want ErrInvalidRange", spans, g, err)
		}
	}
}

func TestGroupExtract(t *testing.T) {
	g := Group{Span: Span{100, 50}}
	data := make([]byte, 50)
	for i := range data {
		data[i] = byte(i)
	}
	tests := []struct {
		s    Span
		data []byte
		want []byte
	}{
		{Span{100, 3}, data, []byte{0, 1, 2}},
		{Span{140, 10}, data, data[40:50]},
		{Span{110, 0}, data, []byte{}},
		{Span{140, 10}, data[:45], data[40:45]}, // value ended early
		{Span{140, 10}, data[:20], []byte{}},    // entirely past the end
		{Span{100, 5}, nil, []byte{}},
	}
	for _, tt := range tests {
		got := g.Extract(tt.data, tt.s)
		if got == nil || !bytes.Equal(got, tt.want) || cap(got) != len(got) {
			t.Errorf("Extract(len %d, %v) = %v (cap %d), want %v", len(tt.data), tt.s, got, cap(got), tt.want)
		}
	}
}

// checkCoalesce checks the invariants of a Coalesce result.
func checkCoalesce(t *testing.T, spans []Span, opt CoalesceOptions, groups []Group) {
	t.Helper()
	gap, maxSize := opt.resolved()
	seen := make([]int, len(spans))
	for gi, g := range groups {
		if len(g.Members) == 0 {
			t.Fatalf("group %d has no members", gi)
		}
		lo, hi := int64(math.MaxInt64), int64(0)
		for _, m := range g.Members {
			if m < 0 || m >= len(spans) {
				t.Fatalf("group %d: member %d out of range", gi, m)
			}
			seen[m]++
			s := spans[m]
			if s.Offset < g.Span.Offset || s.End() > g.Span.End() {
				t.Fatalf("group %d %v does not cover span %d %v", gi, g.Span, m, s)
			}
			lo, hi = min(lo, s.Offset), max(hi, s.End())
		}
		if lo != g.Span.Offset || hi != g.Span.End() {
			t.Fatalf("group %d %v is not tight around its members [%d, %d)", gi, g.Span, lo, hi)
		}
		if g.Span.Length > maxSize {
			single := false
			for _, m := range g.Members {
				single = single || spans[m] == g.Span
			}
			if !single {
				t.Fatalf("group %d %v exceeds MaxSize %d and no single span explains it", gi, g.Span, maxSize)
			}
		}
		if gi > 0 {
			p := groups[gi-1]
			if g.Span.Offset < p.Span.Offset {
				t.Fatalf("groups %d, %d out of order", gi-1, gi)
			}
			f := spans[g.Members[0]]
			newEnd := max(p.Span.End(), f.End())
			if f.Offset-p.Span.End() <= gap && (newEnd == p.Span.End() || newEnd-p.Span.Offset <= maxSize) {
				t.Fatalf("group %d %v could have joined group %d %v", gi, g.Span, gi-1, p.Span)
			}
		}
	}
	for i, n := range seen {
		if n != 1 {
			t.Fatalf("span %d is a member of %d groups", i, n)
		}
	}
	// Serving every span from its group's bytes yields that span's bytes.
	pattern := func(off int64) byte { return byte(off*7 + off>>8) }
	for _, g := range groups {
		if g.Span.Length > 1<<20 {
			continue
		}
		data := make([]byte, g.Span.Length)
		for i := range data {
			data[i] = pattern(g.Span.Offset + int64(i))
		}
		for _, m := range g.Members {
			got := g.Extract(data, spans[m])
			if int64(len(got)) != spans[m].Length {
				t.Fatalf("span %d: extracted %d bytes, want %d", m, len(got), spans[m].Length)
			}
			for i, b := range got {
				if b != pattern(spans[m].Offset+int64(i)) {
					t.Fatalf("span %d: byte %d wrong", m, i)
				}
			}
		}
	}
}

// decodeSpans turns fuzz input into options and spans: two bytes of
// options, then three bytes per span.
func decodeSpans(data []byte) ([]Span, CoalesceOptions) {
	var opt CoalesceOptions
	if len(data) >= 2 {
		opt.MaxGap = int64(int8(data[0]))
		opt.MaxSize = int64(int8(data[1])) * 4
		data = data[2:]
	}
	var spans []Span
	for len(data) >= 3 {
		off := int64(binary.LittleEndian.Uint16(data) % 2048)
		spans = append(spans, Span{off, int64(data[2] % 200)})
		data = data[3:]
	}
	return spans, opt
}

func FuzzCoalesce(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0, 10, 10, 0, 10})
	f.Add([]byte{5, 25, 0, 0, 40, 50, 0, 40, 100, 0, 40, 20, 0, 0})
	f.Add([]byte{0xff, 0xff, 1, 2, 3, 4, 5, 6, 7, 8, 9})
	f.Add([]byte{100, 10, 0, 0, 199, 10, 0, 5, 0, 1, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		spans, opt := decodeSpans(data)
		groups, err := Coalesce(spans, opt)
		if err != nil {
			t.Fatal(err)
		}
		checkCoalesce(t, spans, opt, groups)
	})
}

// countingReader is a Reader over one value that counts Gets.
type countingReader struct {
	value []byte
	gets  []ByteRange
}

func (c *countingReader) Get(ctx context.Context, key string, r ByteRange) ([]byte, error) {
	if key != "k" {
		return nil, &KeyError{Op: "get", Key: key, Err: ErrNotFound}
	}
	c.gets = append(c.gets, r)
	start, end, err := r.Resolve(int64(len(c.value)))
	if err != nil {
		return nil, err
	}
	return bytes.Clone(c.value[start:end:end]), nil
}

func TestGetRangesCoalesced(t *testing.T) {
	value := make([]byte, 1000)
	for i := range value {
		value[i] = byte(i * 13)
	}
	r := &countingReader{value: value}
	ranges := []ByteRange{OffsetLen(500, 10), Suffix(4), OffsetLen(0, 10), OffsetLen(5, 10), OffsetLen(990, 50), Full(), OffsetLen(2000, 5), From(996), OffsetLen(510, 0)}
	got, err := GetRangesCoalesced(context.Background(), r, "k", ranges, CoalesceOptions{MaxGap: 100})
	if err != nil {
		t.Fatal(err)
	}
	want := [][]byte{value[500:510], value[996:], value[0:10], value[5:15], value[990:], value, {}, value[996:], {}}
	for i := range want {
		if got[i] == nil || !bytes.Equal(got[i], want[i]) {
			t.Errorf("range %d (%v) = %v, want %v", i, ranges[i], got[i], want[i])
		}
	}
	// 3 unbounded Gets plus 3 groups: [0,15), [500,510), [990,1040), [2000,2005).
	wantGets := []ByteRange{Suffix(4), Full(), From(996), OffsetLen(0, 15), OffsetLen(500, 10), OffsetLen(990, 50), OffsetLen(2000, 5)}
	if !reflect.DeepEqual(r.gets, wantGets) {
		t.Errorf("Gets = %v, want %v", r.gets, wantGets)
	}

	if _, err := GetRangesCoalesced(context.Background(), r, "k", []ByteRange{OffsetLen(0, 1), OffsetLen(-1, 2)}, CoalesceOptions{}); !errors.Is(err, ErrInvalidRange) {
		t.Errorf("negative range: err = %v, want ErrInvalidRange", err)
	}
	if _, err := GetRangesCoalesced(context.Background(), r, "missing", []ByteRange{OffsetLen(0, 1)}, CoalesceOptions{}); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing key: err = %v, want ErrNotFound", err)
	}
}

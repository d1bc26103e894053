package codecs

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"runtime"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/gozarr/gozarr/dtype"
)

// encodeVLen is the reference encoding: count, then length and bytes.
func encodeVLen(vals ...string) []byte {
	b := binary.LittleEndian.AppendUint32(nil, uint32(len(vals)))
	for _, v := range vals {
		b = binary.LittleEndian.AppendUint32(b, uint32(len(v)))
		b = append(b, v...)
	}
	return b
}

func vlenRepr(d dtype.DataType, n int) ChunkRepr {
	return ChunkRepr{Shape: []int{n}, DType: d, Fill: make([]byte, dtype.HandleSize)}
}

// boundVLen returns the codec of d bound to a new arena with fill.
func boundVLen(t testing.TB, d dtype.DataType, fill string) (*VLen, *VLenArena) {
	a := NewVLenArena([]byte(fill), 0)
	c, err := NewVLen(d)
	if err != nil {
		t.Fatal(err)
	}
	return c.bind(a), a
}

// TestVLenDecodeEncode decodes a zarr-python chunk (the bytes of
// testdata/vlen/v3_string_raw.zarr/c/0) into handles, resolves and
// re-encodes them, and checks a chain with zstd decodes the same.
func TestVLenDecodeEncode(t *testing.T) {
	vals := []string{"", "héllo", "日本語", "x"}
	src := encodeVLen(vals...)
	c, a := boundVLen(t, dtype.TypeVarString, "fill")
	h := make([]byte, 8*len(vals))
	if err := c.Decode(h, src, vlenRepr(dtype.TypeVarString, 4)); err != nil {
		t.Fatal(err)
	}
	re, err := c.Encode(nil, h, vlenRepr(dtype.TypeVarString, 4))
	if err != nil || string(re) != string(src) {
		t.Fatalf("re-encoded %q %v, want %q", re, err, src)
	}
	// Handle 0 is the fill value.
	withFill := append(slices.Clone(h), make([]byte, 8)...)
	re, err = c.Encode(nil, withFill, vlenRepr(dtype.TypeVarString, 5))
	if err != nil || string(re) != string(encodeVLen(append(vals, "fill")...)) {
		t.Fatalf("with fill: %q %v", re, err)
	}
	out := make([]string, 5)
	if err := a.ResolveStrings(withFill, out); err != nil || !slices.Equal(out, append(vals, "fill")) {
		t.Fatalf("resolved %q %v", out, err)
	}
	// Through a chain: vlen-utf8 then zstd, as zarr-python writes it
	// (resolving released the handles: decode again).
	if err := c.Decode(h, src, vlenRepr(dtype.TypeVarString, 4)); err != nil {
		t.Fatal(err)
	}
	chain, err := NewChain([]Spec{{Name: "vlen-utf8"}, {Name: "zstd", Configuration: []byte(`{"level": 0, "checksum": false}`)}}, vlenRepr(dtype.TypeVarString, 4))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := chain.Encode(nil, h); !errors.Is(err, ErrVLenUnbound) {
		t.Fatalf("unbound chain encoded: %v", err)
	}
	if chain, err = chain.Prepare(chain.Repr(), PrepareOptions{VLen: a}); err != nil {
		t.Fatal(err)
	}
	enc, err := chain.Encode(nil, h)
	if err != nil {
		t.Fatal(err)
	}
	h2 := make([]byte, len(h))
	if err := chain.Decode(h2, enc); err != nil {
		t.Fatal(err)
	}
	out = make([]string, 4)
	if err := a.ResolveStrings(h2, out); err != nil || !slices.Equal(out, vals) {
		t.Fatalf("chain resolved %q %v", out, err)
	}
}

// TestVLenFillHandle: decoded values equal to the fill value get handle
// 0, so the write engine sees a chunk of them as empty.
func TestVLenFillHandle(t *testing.T) {
	c, _ := boundVLen(t, dtype.TypeVarString, "NA")
	h := make([]byte, 24)
	if err := c.Decode(h, encodeVLen("NA", "x", "NA"), vlenRepr(dtype.TypeVarString, 3)); err != nil {
		t.Fatal(err)
	}
	if a, b, c := binary.LittleEndian.Uint64(h), binary.LittleEndian.Uint64(h[8:]), binary.LittleEndian.Uint64(h[16:]); a != 0 || b == 0 || c != 0 {
		t.Errorf("handles %x %x %x, want 0, not 0, 0", a, b, c)
	}
}

// TestVLenHostile: a chunk claiming 2^32-1 elements, or an element
// running past the end, is ErrCorrupt with no large allocation.
func TestVLenHostile(t *testing.T) {
	c, _ := boundVLen(t, dtype.TypeVarBytes, "")
	for _, tc := range []struct {
		name string
		src  []byte
		n    int
	}{
		{"count 2^32-1", []byte{0xff, 0xff, 0xff, 0xff}, 2},
		{"count 2^32-1 for as many", []byte{0xff, 0xff, 0xff, 0xff, 1, 0, 0, 0}, min(1<<32-1, math.MaxInt)},
		{"length 2^32-1", []byte{1, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 'a'}, 1},
		{"length past the end", []byte{2, 0, 0, 0, 1, 0, 0, 0, 'a', 5, 0, 0, 0, 'b'}, 2},
		{"too short for the lengths", []byte{3, 0, 0, 0, 0, 0, 0, 0}, 3},
		{"empty", nil, 1},
		{"trailing", []byte{1, 0, 0, 0, 0, 0, 0, 0, 'x'}, 1},
	} {
		if tc.n > 1<<20 {
			// The caller's handles would be 32 GiB: check without them.
			if err := ValidateVLen(dtype.TypeVarBytes, tc.src, tc.n); !errors.Is(err, ErrCorrupt) {
				t.Errorf("%s: %v, want ErrCorrupt", tc.name, err)
			}
			continue
		}
		dst := make([]byte, 8*tc.n)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		err := c.Decode(dst, tc.src, vlenRepr(dtype.TypeVarBytes, tc.n))
		runtime.ReadMemStats(&after)
		if !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: %v, want ErrCorrupt", tc.name, err)
		}
		if got := after.TotalAlloc - before.TotalAlloc; got > 64<<10 {
			t.Errorf("%s: %d bytes allocated", tc.name, got)
		}
	}
	// Bad UTF-8 is corrupt for strings, fine for bytes.
	bad := encodeVLen("\xff")
	if err := c.Decode(make([]byte, 8), bad, vlenRepr(dtype.TypeVarBytes, 1)); err != nil {
		t.Errorf("bytes \\xff: %v", err)
	}
	s, _ := boundVLen(t, dtype.TypeVarString, "")
	if err := s.Decode(make([]byte, 8), bad, vlenRepr(dtype.TypeVarString, 1)); !errors.Is(err, ErrCorrupt) {
		t.Errorf("string \\xff: %v", err)
	}
	// The unbound codec refuses; an arena named in the configuration
	// (the field an earlier version used) builds nothing.
	u, _ := NewVLen(dtype.TypeVarString)
	if err := u.Decode(make([]byte, 8), encodeVLen("a"), vlenRepr(dtype.TypeVarString, 1)); !errors.Is(err, ErrVLenUnbound) {
		t.Errorf("unbound: %v", err)
	}
	_ = NewVLenArena(nil, 0)
	for _, cfg := range []string{`{"gozarr_arena":1}`, `{"gozarr_arena":0}`, `{"arena":1}`} {
		if _, err := New(Spec{Name: "vlen-utf8", Configuration: json.RawMessage(cfg)}); !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), "unknown field") {
			t.Errorf("configuration %s: %v", cfg, err)
		}
	}
	// A chunk larger than the arena's bound is refused before decoding.
	small := NewVLenArena(nil, 4)
	u2, _ := NewVLen(dtype.TypeVarBytes)
	sc := u2.bind(small)
	if err := sc.Decode(make([]byte, 8), encodeVLen("12345"), vlenRepr(dtype.TypeVarBytes, 1)); !errors.Is(err, ErrCorrupt) {
		t.Errorf("over the bound: %v", err)
	}
	// The wrong data type is refused when the chain is resolved.
	if _, err := NewChain([]Spec{{Name: "vlen-utf8"}}, ChunkRepr{Shape: []int{2}, DType: dtype.TypeInt64, Fill: make([]byte, 8)}); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("vlen-utf8 for int64: %v", err)
	}
	if _, err := NewChain([]Spec{{Name: "bytes", Configuration: []byte(`{"endian":"little"}`)}}, vlenRepr(dtype.TypeVarString, 2)); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("bytes for string: %v", err)
	}
}

// TestVLenResolveSparse: a chunk mostly left out is copied from and
// dropped; one mostly used is shared.
func TestVLenResolveSparse(t *testing.T) {
	c, a := boundVLen(t, dtype.TypeVarString, "")
	vals := []string{"aa", "bb", "cc", "dd"}
	h := make([]byte, 32)
	if err := c.Decode(h, encodeVLen(vals...), vlenRepr(dtype.TypeVarString, 4)); err != nil {
		t.Fatal(err)
	}
	raw := a.segs[1].raw
	out := make([]string, 1)
	if err := a.ResolveStrings(h[8:16], out); err != nil || out[0] != "bb" {
		t.Fatalf("%q %v", out, err)
	}
	raw[8+4] = 'X' // the chunk's copy of "bb" (never done outside tests)
	if out[0] != "bb" {
		t.Errorf("a value of a mostly unused chunk shares its memory")
	}
	if a.segs[1].raw != nil {
		t.Errorf("segment kept after resolving")
	}
}

// FuzzVLenDecode decodes arbitrary chunks of n elements: a decoded chunk
// re-encodes to its input, and values resolve to valid UTF-8 for strings.
func FuzzVLenDecode(f *testing.F) {
	f.Add(encodeVLen("", "héllo", "x"), uint16(3), true)
	f.Add(encodeVLen("\x00\xff"), uint16(1), false)
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0}, uint16(2), false)
	f.Fuzz(func(t *testing.T, src []byte, n uint16, text bool) {
		d := dtype.TypeVarBytes
		if text {
			d = dtype.TypeVarString
		}
		c, a := boundVLen(t, d, "")
		h := make([]byte, 8*int(n))
		err := c.Decode(h, src, vlenRepr(d, int(n)))
		if verr := ValidateVLen(d, src, int(n)); (verr == nil) != (err == nil) {
			t.Fatalf("Decode %v, ValidateVLen %v", err, verr)
		}
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error without ErrCorrupt: %v", err)
			}
			return
		}
		re, err := c.Encode(nil, h, vlenRepr(d, int(n)))
		if err != nil || string(re) != string(src) {
			t.Fatalf("re-encoded %x %v, want %x", re, err, src)
		}
		out := make([]string, n)
		if err := a.ResolveStrings(h, out); err != nil {
			t.Fatal(err)
		}
		for _, s := range out {
			if text && !utf8.ValidString(s) {
				t.Fatalf("invalid UTF-8 %q", s)
			}
		}
	})
}

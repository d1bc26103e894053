package numcodecs_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/dtype"
)

// objectCodecs are configurations of every object codec, for fuzzing.
var objectCodecs = []codecs.Spec{
	{Name: "numcodecs.json2", Configuration: json.RawMessage(`{"allow_nan": true, "sort_keys": true, "indent": null}`)},
	{Name: "numcodecs.msgpack2", Configuration: json.RawMessage(`{"raw": false, "use_bin_type": true}`)},
	{Name: "numcodecs.vlen-array", Configuration: json.RawMessage(`{"dtype": "<i2"}`)},
	{Name: "numcodecs.categorize", Configuration: json.RawMessage(`{"labels": ["a", "bc"], "dtype": "|O", "astype": "|u1"}`)},
}

// FuzzObjectDecode feeds arbitrary chunks to every object codec, bound to
// an arena: no panic, errors are ErrCorrupt, and a chunk that decodes
// re-encodes to one that decodes to the same values.
func FuzzObjectDecode(f *testing.F) {
	f.Add(0, []byte(`[["a",1],[null,2.5],"|O",[2,2]]`), 2, 2)
	f.Add(0, []byte(`[1,NaN,"|O",[2]]`), 2, 1)
	f.Add(1, []byte{0x94, 0x01, 0xa1, 'x', 0xa2, '|', 'O', 0x91, 0x02}, 2, 1)
	f.Add(2, []byte{2, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 0, 0}, 2, 1)
	f.Add(3, []byte{1, 2, 0, 9}, 2, 2)
	f.Fuzz(func(t *testing.T, which int, src []byte, rows, cols int) {
		if which < 0 || which >= len(objectCodecs) || rows < 0 || cols < 0 || rows > 64 || cols > 64 {
			return
		}
		c, err := codecs.New(objectCodecs[which])
		if err != nil {
			t.Fatal(err)
		}
		d := dtype.TypeVarObject
		switch which {
		case 2:
			d = dtype.TypeVarArray
		case 3:
			d = dtype.TypeVarString
		}
		arena := codecs.NewVLenArena([]byte{}, 1<<16)
		repr := codecs.ChunkRepr{Shape: []int{rows, cols}, DType: d}
		bound, err := c.(codecs.ArrayToBytesPreparer).PrepareArrayToBytes(repr, codecs.PrepareOptions{VLen: arena})
		if err != nil {
			t.Fatal(err)
		}
		dst := make([]byte, repr.NumBytes())
		if err := bound.Decode(dst, src); err != nil {
			if !errors.Is(err, codecs.ErrCorrupt) {
				t.Fatalf("error %v is not ErrCorrupt", err)
			}
			return
		}
		enc, err := bound.Encode(nil, dst)
		if err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		a := make([][]byte, rows*cols)
		if err := arena.ResolveBytes(dst, a); err != nil {
			t.Fatal(err)
		}
		arena2 := codecs.NewVLenArena([]byte{}, 1<<16)
		bound2, err := c.(codecs.ArrayToBytesPreparer).PrepareArrayToBytes(repr, codecs.PrepareOptions{VLen: arena2})
		if err != nil {
			t.Fatal(err)
		}
		dst2 := make([]byte, len(dst))
		if err := bound2.Decode(dst2, enc); err != nil {
			t.Fatalf("re-encoded chunk %q does not decode: %v", enc, err)
		}
		b := make([][]byte, rows*cols)
		if err := arena2.ResolveBytes(dst2, b); err != nil {
			t.Fatal(err)
		}
		for i := range a {
			if string(a[i]) != string(b[i]) {
				t.Fatalf("element %d: %q then %q", i, a[i], b[i])
			}
		}
	})
}

package codecs

import (
	"bytes"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gozarr/gozarr/dtype"
)

// naiveTranspose computes numpy.transpose(src, order) one element at a time
// from the index formula: encoded[j] = decoded[x] with x[order[i]] = j[i].
func naiveTranspose(src []byte, shape, order []int, es int) []byte {
	n := len(shape)
	enc := make([]int, n)
	for i, o := range order {
		enc[i] = shape[o]
	}
	out := make([]byte, len(src))
	x := make([]int, n)
	for off := 0; off*es < len(src); off++ {
		rem := off
		for k := n - 1; k >= 0; k-- {
			x[k] = rem % shape[k]
			rem /= shape[k]
		}
		lin := 0
		for i := range n {
			lin = lin*enc[i] + x[order[i]]
		}
		copy(out[lin*es:lin*es+es], src[off*es:off*es+es])
		if n == 0 {
			break
		}
	}
	return out
}

// TestTransposeNaive compares Encode and Decode with the index formula for
// random shapes and permutations of up to 4 dimensions and several element
// sizes, including sizes that exercise the blocked 2-D kernel.
func TestTransposeNaive(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	types := []dtype.DataType{dtype.TypeUint8, dtype.TypeInt16, mustRaw(24), dtype.TypeFloat32,
		dtype.TypeFloat64, dtype.TypeComplex128}
	var enc, dec []byte
	for iter := 0; iter < 400; iter++ {
		ndim := iter % 5
		shape := make([]int, ndim)
		for i := range shape {
			shape[i] = 1 + r.IntN(9)
			if r.IntN(8) == 0 {
				shape[i] = 1
			}
		}
		if ndim == 2 && iter%10 == 2 {
			shape = []int{33 + r.IntN(70), 40 + r.IntN(70)} // several tiles, ragged
		}
		order := r.Perm(ndim)
		dt := types[r.IntN(len(types))]
		repr := reprOf(dt, shape...)
		tr := must(NewTranspose(order))
		src := randomBytes(r, repr.NumBytes())
		want := naiveTranspose(src, shape, order, dt.Size())
		enc = slices.Grow(enc[:0], len(src))[:len(src)]
		if err := tr.Encode(enc, src, repr); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(enc, want) {
			t.Fatalf("shape %v order %v %s: Encode differs from the index formula", shape, order, dt)
		}
		er, err := tr.EncodedRepr(repr)
		if err != nil {
			t.Fatal(err)
		}
		for i, o := range order {
			if er.Shape[i] != shape[o] {
				t.Fatalf("shape %v order %v: EncodedRepr %v", shape, order, er.Shape)
			}
		}
		dec = slices.Grow(dec[:0], len(src))[:len(src)]
		if err := tr.Decode(dec, enc, repr); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(dec, src) {
			t.Fatalf("shape %v order %v %s: Decode does not invert Encode", shape, order, dt)
		}
	}
}

// TestTransposeUnaligned runs the element-wise fallback, taken when the
// buffers are not aligned for whole-word moves.
func TestTransposeUnaligned(t *testing.T) {
	r := rand.New(rand.NewPCG(19, 20))
	for _, dt := range []dtype.DataType{dtype.TypeInt16, dtype.TypeFloat32, dtype.TypeFloat64, dtype.TypeComplex128} {
		shape, order := []int{37, 45}, []int{1, 0}
		repr := reprOf(dt, shape...)
		n := repr.NumBytes()
		src := randomBytes(r, n+1)[1:]
		enc := make([]byte, n+1)[1:]
		dec := make([]byte, n+1)[1:]
		tr := must(NewTranspose(order))
		if err := tr.Encode(enc, src, repr); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(enc, naiveTranspose(src, shape, order, dt.Size())) {
			t.Fatalf("%s: unaligned Encode differs from the index formula", dt)
		}
		if err := tr.Decode(dec, enc, repr); err != nil || !bytes.Equal(dec, src) {
			t.Fatalf("%s: unaligned Decode: %v", dt, err)
		}
	}
}

func TestTransposeErrors(t *testing.T) {
	tr := must(NewTranspose([]int{1, 0}))
	repr := reprOf(dtype.TypeInt16, 3, 4)
	buf := make([]byte, repr.NumBytes())
	if err := tr.Encode(buf, buf[:10], repr); !errors.Is(err, ErrCorrupt) {
		t.Errorf("Encode short src: %v", err)
	}
	if err := tr.Decode(buf[:10], buf, repr); !errors.Is(err, ErrCorrupt) {
		t.Errorf("Decode short dst: %v", err)
	}
	if err := tr.Decode(buf, buf, reprOf(dtype.TypeInt16, 12)); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("Decode 1-d chunk with a 2-d order: %v", err)
	}
	if _, err := tr.EncodedRepr(reprOf(dtype.TypeInt16, 1, 2, 3)); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("EncodedRepr 3-d: %v", err)
	}
	for _, order := range [][]int{{1}, {0, 0}, {2, 0}, {-1, 0}, {0, 1, 3}} {
		if _, err := NewTranspose(order); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("NewTranspose(%v): %v", order, err)
		}
	}
	got, _ := json.Marshal(must(NewTranspose([]int{2, 0, 1})).Configuration())
	if string(got) != `{"order":[2,0,1]}` {
		t.Errorf("Configuration = %s", got)
	}
}

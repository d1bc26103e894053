package codecs

// The transpose codec (array -> array).
//
// Spec: https://zarr-specs.readthedocs.io/en/latest/v3/codecs/transpose/index.html
// JSON name: "transpose"
// Configuration example:
//
//	{"name": "transpose", "configuration": {"order": [1, 2, 0]}}
//
// "order" is a permutation of the chunk's dimensions; the encoded array is
// numpy.transpose(decoded, order), so encoded shape[i] = decoded shape[order[i]].

import (
	"encoding/json"
	"fmt"
	"slices"
	"unsafe"
)

// Transpose is the "transpose" codec
// (https://zarr-specs.readthedocs.io/en/latest/v3/codecs/transpose/index.html),
// configured as {"name": "transpose", "configuration": {"order": [1, 0]}}:
// it permutes the dimensions of a chunk.
// A Transpose is immutable and safe for concurrent use.
type Transpose struct {
	order []int
	inv   []int // inv[order[i]] = i
}

// NewTranspose returns the transpose codec with the given order, which must
// be a permutation of 0..len(order)-1 (else ErrInvalidConfig). Whether it
// fits a chunk's number of dimensions is checked by EncodedRepr.
func NewTranspose(order []int) (*Transpose, error) {
	inv := make([]int, len(order))
	seen := make([]bool, len(order))
	for i, o := range order {
		if o < 0 || o >= len(order) || seen[o] {
			return nil, fmt.Errorf("%w: transpose: order %v is not a permutation of 0..%d", ErrInvalidConfig, order, len(order)-1)
		}
		seen[o] = true
		inv[o] = i
	}
	return &Transpose{order: slices.Clone(order), inv: inv}, nil
}

func init() {
	Register("transpose", func(configuration json.RawMessage) (Codec, error) {
		var cfg struct {
			Order *[]int `json:"order"`
		}
		if err := DecodeConfig(configuration, &cfg); err != nil {
			return nil, err
		}
		if cfg.Order == nil {
			return nil, fmt.Errorf("%w: transpose: configuration needs \"order\"", ErrInvalidConfig)
		}
		return NewTranspose(*cfg.Order)
	})
}

// Name returns "transpose".
func (t *Transpose) Name() string { return "transpose" }

// Order returns a copy of the permutation.
func (t *Transpose) Order() []int { return slices.Clone(t.order) }

// Configuration returns {"order": [...]}.
func (t *Transpose) Configuration() any {
	return struct {
		Order []int `json:"order"`
	}{t.order}
}

// EncodedRepr returns decoded with its shape permuted. An order whose length
// is not the chunk's number of dimensions is ErrInvalidConfig.
func (t *Transpose) EncodedRepr(decoded ChunkRepr) (ChunkRepr, error) {
	if len(decoded.Shape) != len(t.order) {
		return ChunkRepr{}, fmt.Errorf("%w: transpose: order %v has %d dimensions, chunk shape %v has %d",
			ErrInvalidConfig, t.order, len(t.order), decoded.Shape, len(decoded.Shape))
	}
	enc := decoded
	enc.Shape = make([]int, len(t.order))
	for i, o := range t.order {
		enc.Shape[i] = decoded.Shape[o]
	}
	return enc, nil
}

func (t *Transpose) check(op string, dst, src []byte, decoded ChunkRepr) error {
	if len(decoded.Shape) != len(t.order) {
		return fmt.Errorf("%w: transpose: order %v does not fit chunk shape %v", ErrInvalidConfig, t.order, decoded.Shape)
	}
	if n := decoded.NumBytes(); len(src) != n || len(dst) != n {
		return fmt.Errorf("%w: transpose: %s from %d into %d bytes, chunk of %v %s has %d",
			ErrCorrupt, op, len(src), len(dst), decoded.Shape, decoded.DType, n)
	}
	return nil
}

// Encode writes numpy.transpose(src, order) into dst.
func (t *Transpose) Encode(dst, src []byte, decoded ChunkRepr) error {
	if err := t.check("encode", dst, src, decoded); err != nil {
		return err
	}
	permute(dst, src, decoded.Shape, t.order, decoded.DType.Size())
	return nil
}

// Decode writes the inverse transposition of src (an encoded chunk) into dst.
func (t *Transpose) Decode(dst, src []byte, decoded ChunkRepr) error {
	if err := t.check("decode", dst, src, decoded); err != nil {
		return err
	}
	enc := make([]int, 0, 8)
	for _, o := range t.order {
		enc = append(enc, decoded.Shape[o])
	}
	permute(dst, src, enc, t.inv, decoded.DType.Size())
	return nil
}

// tile is the side, in elements, of the blocks the 2-D transpose kernel
// copies so that both source and destination stay in cache.
const tile = 32

// permute writes dst = numpy.transpose(src, perm), where src is a C-order
// array of the given shape with elements of es bytes: dst has shape
// shape[perm[i]] and dst[j...] = src[x...] with x[perm[i]] = j[i].
func permute(dst, src []byte, shape, perm []int, es int) {
	n := len(src)
	if n == 0 {
		return
	}
	// Element strides of src.
	var sbuf [8]int
	sst := sbuf[:0]
	if len(shape) > len(sbuf) {
		sst = make([]int, 0, len(shape))
	}
	sst = sst[:len(shape)]
	st := 1
	for k := len(shape) - 1; k >= 0; k-- {
		sst[k] = st
		st *= shape[k]
	}
	// Dimensions in destination order with their source strides; size-1
	// dimensions dropped, dimensions contiguous in both arrays merged.
	var dbuf [8]dim
	dims := dbuf[:0]
	for _, p := range perm {
		d := dim{shape[p], sst[p]}
		if d.size == 1 {
			continue
		}
		if l := len(dims) - 1; l >= 0 && dims[l].sstride == d.sstride*d.size {
			dims[l].size *= d.size
			dims[l].sstride = d.sstride
			continue
		}
		dims = append(dims, d)
	}
	if len(dims) <= 1 {
		copy(dst, src)
		return
	}
	// Destination strides (elements).
	var tbuf [8]int
	dstr := tbuf[:0]
	if len(dims) > len(tbuf) {
		dstr = make([]int, 0, len(dims))
	}
	dstr = dstr[:len(dims)]
	st = 1
	for k := len(dims) - 1; k >= 0; k-- {
		dstr[k] = st
		st *= dims[k].size
	}
	last := len(dims) - 1
	if dims[last].sstride == 1 {
		// Runs are contiguous in both: copy them whole.
		run := dims[last].size * es
		odometer(dims[:last], dstr[:last], func(do, so int) {
			copy(dst[do*es:do*es+run], src[so*es:so*es+run])
		})
		return
	}
	// a: the destination's innermost dimension; b: the source's.
	a := last
	b := 0
	for k, d := range dims {
		if d.sstride == 1 {
			b = k
		}
	}
	na, sa := dims[a].size, dims[a].sstride
	nb, db := dims[b].size, dstr[b]
	rest := make([]dim, 0, len(dims))
	rstr := make([]int, 0, len(dims))
	for k := range dims {
		if k != a && k != b {
			rest = append(rest, dims[k])
			rstr = append(rstr, dstr[k])
		}
	}
	odometer(rest, rstr, func(do, so int) {
		transpose2D(dst, src, do, so, nb, na, db, sa, es)
	})
}

// transpose2D copies, for i < nb and j < na, the element at source offset
// so + j*sa + i to destination offset do + i*db + j (offsets in elements of
// es bytes), in tiles. Elements of 2, 4, 8 and 16 bytes are moved as whole
// words when both buffers are aligned for them.
func transpose2D(dst, src []byte, do, so, nb, na, db, sa, es int) {
	switch es {
	case 1:
		transposeTiles(dst, src, do, so, nb, na, db, sa)
		return
	case 2:
		if d, s, ok := words[uint16](dst, src); ok {
			transposeTiles(d, s, do, so, nb, na, db, sa)
			return
		}
	case 4:
		if d, s, ok := words[uint32](dst, src); ok {
			transposeTiles(d, s, do, so, nb, na, db, sa)
			return
		}
	case 8:
		if d, s, ok := words[uint64](dst, src); ok {
			transposeTiles(d, s, do, so, nb, na, db, sa)
			return
		}
	case 16:
		if d, s, ok := words[[2]uint64](dst, src); ok {
			transposeTiles(d, s, do, so, nb, na, db, sa)
			return
		}
	}
	for i0 := 0; i0 < nb; i0 += tile {
		i1 := min(i0+tile, nb)
		for j0 := 0; j0 < na; j0 += tile {
			j1 := min(j0+tile, na)
			for i := i0; i < i1; i++ {
				d := do + i*db
				s := so + i
				for j := j0; j < j1; j++ {
					copy(dst[es*(d+j):es*(d+j+1)], src[es*(s+j*sa):])
				}
			}
		}
	}
}

// word is an element type the transpose kernel moves in one piece.
type word interface {
	uint8 | uint16 | uint32 | uint64 | [2]uint64
}

// words returns dst and src as slices of W when both are aligned for it.
func words[W word](dst, src []byte) ([]W, []W, bool) {
	var w W
	size, align := int(unsafe.Sizeof(w)), uintptr(unsafe.Alignof(w))
	if len(dst) == 0 || len(src) == 0 ||
		uintptr(unsafe.Pointer(unsafe.SliceData(dst)))%align != 0 ||
		uintptr(unsafe.Pointer(unsafe.SliceData(src)))%align != 0 {
		return nil, nil, false
	}
	return unsafe.Slice((*W)(unsafe.Pointer(unsafe.SliceData(dst))), len(dst)/size),
		unsafe.Slice((*W)(unsafe.Pointer(unsafe.SliceData(src))), len(src)/size), true
}

// transposeTiles is transpose2D over whole elements.
func transposeTiles[W word](dst, src []W, do, so, nb, na, db, sa int) {
	for i0 := 0; i0 < nb; i0 += tile {
		i1 := min(i0+tile, nb)
		for j0 := 0; j0 < na; j0 += tile {
			j1 := min(j0+tile, na)
			for i := i0; i < i1; i++ {
				d := dst[do+i*db+j0 : do+i*db+j1]
				s := so + i + j0*sa
				for j := range d {
					d[j] = src[s+j*sa]
				}
			}
		}
	}
}

// dim is one dimension of a permutation: its size and its source stride
// in elements.
type dim struct{ size, sstride int }

// odometer calls fn with the destination and source offsets (in elements)
// of every index of dims, in C order; dstr holds the destination strides.
func odometer(dims []dim, dstr []int, fn func(do, so int)) {
	var ibuf [8]int
	idx := ibuf[:0]
	if len(dims) > len(ibuf) {
		idx = make([]int, 0, len(dims))
	}
	idx = idx[:len(dims)]
	clear(idx)
	do, so := 0, 0
	for {
		fn(do, so)
		k := len(dims) - 1
		for ; k >= 0; k-- {
			idx[k]++
			do += dstr[k]
			so += dims[k].sstride
			if idx[k] < dims[k].size {
				break
			}
			do -= idx[k] * dstr[k]
			so -= idx[k] * dims[k].sstride
			idx[k] = 0
		}
		if k < 0 {
			return
		}
	}
}

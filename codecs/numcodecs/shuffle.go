package numcodecs

// The numcodecs shuffle filter (bytes -> bytes).
//
// Format: https://numcodecs.readthedocs.io/en/stable/filter/shuffle.html
// JSON name: "numcodecs.shuffle"
// Configuration example (Zarr v2: {"id": "shuffle", "elementsize": 4}):
//
//	{"name": "numcodecs.shuffle", "configuration": {"elementsize": 4}}

import (
	"encoding/json"
	"fmt"

	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/internal/shuffle"
)

// DefaultShuffleElementSize is numcodecs' default shuffle element size.
const DefaultShuffleElementSize = 4

// Shuffle is the "numcodecs.shuffle" filter
// (https://numcodecs.readthedocs.io/en/stable/filter/shuffle.html),
// configured as {"elementsize": 4}: the data is seen as a sequence of
// elements of elementsize bytes, and encoding writes byte 0 of every
// element, then byte 1 of every element, and so on (a byte transpose, the
// same as blosc's shuffle without blocks). An element size of 1 or less
// copies the data unchanged; otherwise the data must be a whole number of
// elements. The encoded size equals the decoded size. A Shuffle is
// immutable and safe for concurrent use.
type Shuffle struct {
	elementSize int
}

// NewShuffle returns the shuffle filter for elements of the given size.
func NewShuffle(elementSize int) *Shuffle { return &Shuffle{elementSize: elementSize} }

func init() {
	codecs.Register(prefix+"shuffle", func(configuration json.RawMessage) (codecs.Codec, error) {
		cfg := struct {
			ElementSize *int `json:"elementsize"`
		}{}
		if err := codecs.DecodeConfig(configuration, &cfg); err != nil {
			return nil, err
		}
		es := DefaultShuffleElementSize
		if cfg.ElementSize != nil {
			es = *cfg.ElementSize
		}
		return NewShuffle(es), nil
	})
}

// Name returns "numcodecs.shuffle".
func (s *Shuffle) Name() string { return prefix + "shuffle" }

// Configuration returns {"elementsize": n}.
func (s *Shuffle) Configuration() any {
	return struct {
		ElementSize int `json:"elementsize"`
	}{s.elementSize}
}

// MaxEncodedSize returns n: shuffling keeps the size.
func (s *Shuffle) MaxEncodedSize(n int) int { return n }

// Encode appends the shuffled src to dst. Data that is not a whole number
// of elements is ErrInvalidConfig.
func (s *Shuffle) Encode(dst, src []byte) ([]byte, error) {
	es := s.elementSize
	if es <= 1 {
		return append(dst, src...), nil
	}
	if len(src)%es != 0 {
		return dst, fmt.Errorf("%w: numcodecs.shuffle: %d bytes are not a whole number of %d-byte elements", codecs.ErrInvalidConfig, len(src), es)
	}
	start := len(dst)
	out := ensure(dst, len(src))
	transpose(out[start:], src, len(src)/es, es)
	return out, nil
}

// Decode appends the unshuffled src to dst. Data longer than limit, or not
// a whole number of elements, is ErrCorrupt.
func (s *Shuffle) Decode(dst, src []byte, limit int) ([]byte, error) {
	if len(src) > limit {
		return dst, fmt.Errorf("%w: numcodecs.shuffle: %d bytes, at most %d expected", codecs.ErrCorrupt, len(src), max(limit, 0))
	}
	es := s.elementSize
	if es <= 1 {
		return append(dst, src...), nil
	}
	if len(src)%es != 0 {
		return dst, fmt.Errorf("%w: numcodecs.shuffle: %d bytes are not a whole number of %d-byte elements", codecs.ErrCorrupt, len(src), es)
	}
	start := len(dst)
	out := ensure(dst, len(src))
	transpose(out[start:], src, es, len(src)/es)
	return out, nil
}

// transpose writes the rows x cols byte matrix src (row-major) into dst as
// its cols x rows transpose. Shuffling n elements of size k is transpose(n,
// k); unshuffling is transpose(k, n). Matrices with 2, 4 or 8 columns or
// rows (the common element sizes) take straight loops over the narrow
// side; others work in square tiles so both sides stay in cache.
func transpose(dst, src []byte, rows, cols int) {
	if rows == 0 || cols == 0 {
		return
	}
	switch {
	case cols == 2 || cols == 4 || cols == 8:
		// Shuffle: gather byte j of every element into plane j.
		for j := range cols {
			plane := dst[j*rows : (j+1)*rows]
			s := src[j:]
			for i := range plane {
				plane[i] = s[i*cols]
			}
		}
		return
	case (rows == 2 || rows == 4 || rows == 8) && shuffle.HaveKernels && cols >= 16:
		// Unshuffle: the SIMD kernel, then the scalar loops below for the
		// last elements.
		done := shuffle.Unshuffle(dst, src, rows, cols)
		if done < cols {
			var buf [8 * 16]byte // fewer than 16 elements of at most 8 bytes
			tail := buf[:rows*(cols-done)]
			for j := range rows {
				copy(tail[j*(cols-done):], src[j*cols+done:(j+1)*cols])
			}
			transpose(dst[rows*done:], tail, rows, cols-done)
		}
		return
	case rows == 4:
		// Unshuffle of 4-byte elements: interleave four planes.
		n := cols
		p0, p1, p2, p3 := src[:n], src[n:2*n], src[2*n:3*n], src[3*n:4*n]
		d := dst[:4*n]
		for i := range p0 {
			o := d[4*i : 4*i+4]
			o[0], o[1], o[2], o[3] = p0[i], p1[i], p2[i], p3[i]
		}
		return
	case rows == 8:
		n := cols
		p := [8][]byte{src[:n], src[n : 2*n], src[2*n : 3*n], src[3*n : 4*n],
			src[4*n : 5*n], src[5*n : 6*n], src[6*n : 7*n], src[7*n : 8*n]}
		d := dst[:8*n]
		for i := 0; i < n; i++ {
			o := d[8*i : 8*i+8]
			o[0], o[1], o[2], o[3] = p[0][i], p[1][i], p[2][i], p[3][i]
			o[4], o[5], o[6], o[7] = p[4][i], p[5][i], p[6][i], p[7][i]
		}
		return
	case rows == 2:
		n := cols
		p0, p1 := src[:n], src[n:2*n]
		d := dst[:2*n]
		for i := range p0 {
			d[2*i], d[2*i+1] = p0[i], p1[i]
		}
		return
	}
	const tile = 32
	for r0 := 0; r0 < rows; r0 += tile {
		r1 := min(r0+tile, rows)
		for c0 := 0; c0 < cols; c0 += tile {
			c1 := min(c0+tile, cols)
			for r := r0; r < r1; r++ {
				row := src[r*cols : r*cols+cols]
				for c := c0; c < c1; c++ {
					dst[c*rows+r] = row[c]
				}
			}
		}
	}
}

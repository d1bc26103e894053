package inflate

import (
	"bytes"
	"errors"
	"testing"
)

// FuzzInflate checks the decoder against the standard library's
// compress/flate, compress/zlib and compress/gzip: data is decoded as a
// stream of the framing ctl%3 (both must fail, or both give the same
// bytes and, raw, consume the same input), under the limit ctl/3%4
// selects; and data compressed by the standard library at level
// (level%11)-2 must decode to itself, as must data repeated with
// variations to 200 kB when level%4 is 0.
func FuzzInflate(f *testing.F) {
	for _, data := range [][]byte{nil, []byte("hello hello hello"), textData(3000), floatData(4000), runData(3000)} {
		for mode := range numModes {
			for _, level := range []int{-2, 0, 1, 6, 9} {
				f.Add(compress(f, mode, data, level), uint8(level+2), uint8(mode))
			}
		}
	}
	limits := [4]int{1 << 20, 0, 100, 5000}
	f.Fuzz(func(t *testing.T, data []byte, level, ctl uint8) {
		mode := int(ctl % numModes)
		limit := limits[ctl/numModes%4]
		dst := []byte("prefix")[:ctl/12%7]
		want, wantN, ok := reference(mode, data, limit)
		out, n, err := decode(mode, dst, data, limit)
		if ok != (err == nil) {
			t.Fatalf("%s limit %d: standard library ok %v, err %v", modeNames[mode], limit, ok, err)
		}
		if err != nil {
			if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrChecksum) && !errors.Is(err, ErrTooLarge) {
				t.Fatalf("err %v wraps no sentinel", err)
			}
			if !bytes.Equal(out, dst) {
				t.Fatal("on error the output is not dst")
			}
			return
		}
		if !bytes.Equal(out[:len(dst)], dst) || !bytes.Equal(out[len(dst):], want) {
			t.Fatalf("%s: output differs from the standard library's", modeNames[mode])
		}
		if mode == modeRaw && n != wantN {
			t.Fatalf("raw: consumed %d bytes, the standard library %d", n, wantN)
		}

		// Round trips of data and, one time in four, of data grown to
		// several blocks (block boundaries in the fast loop).
		if level%4 == 0 && len(data) > 0 {
			data = grow(data, 200000)
		}
		src := compress(t, mode, data, int(level%11)-2)
		out, _, err = decode(mode, nil, src, len(data))
		if err != nil || !bytes.Equal(out, data) {
			t.Fatalf("%s level %d, %d bytes: round trip failed: %v", modeNames[mode], int(level%11)-2, len(data), err)
		}
	})
}

// grow repeats p to n bytes, each repetition's bytes plus its index, so
// that the repetitions are alike but not equal.
func grow(p []byte, n int) []byte {
	out := make([]byte, 0, n)
	for r := 0; len(out) < n; r++ {
		for _, b := range p {
			out = append(out, b+byte(r))
		}
	}
	return out[:n]
}

package zarr

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/store/mem"
)

// FuzzReadStrings opens a v3 document (zarr.json) or, when v2 is set, a v2
// one (.zarray) with the given first chunk and reads it with the string
// API: no panic, errors wrap known sentinels, allocation bounded, and a
// read of a variable-length array gives one value per element that
// re-reads the same. Seeds: the testdata/vlen fixtures.
func FuzzReadStrings(f *testing.F) {
	addFileSeeds("../testdata/vlen", MetadataKey, func(doc, chunk []byte) { f.Add(doc, chunk, false) })
	addFileSeeds("../testdata/vlen", V2ArrayKey, func(doc, chunk []byte) { f.Add(doc, chunk, true) })
	f.Fuzz(func(t *testing.T, doc, chunk []byte, v2 bool) {
		ctx := context.Background()
		st := mem.New()
		key := "a/" + MetadataKey
		if v2 {
			key = "a/" + V2ArrayKey
		}
		_ = st.Set(ctx, key, doc)
		boundAllocs(t, func() {
			a, err := OpenArray(ctx, st, "a", append(fuzzOpts, WithMaxVLenChunkBytes(fuzzChunkBytes))...)
			if failed(t, "open", err) {
				return
			}
			m := a.Metadata()
			if len(chunk) > 0 {
				_ = st.Set(ctx, a.ChunkKey(make([]int, m.NDim())), chunk)
			}
			items := smallSelection(m.Shape)
			switch m.DataType {
			case dtype.TypeVarString:
				got, shape, err := ReadStrings(ctx, a, items...)
				if failed(t, "ReadStrings", err) {
					return
				}
				sel, _ := a.Selection(items...)
				if len(got) != sel.NumElements() || !slices.Equal(shape, sel.Shape()) {
					t.Fatalf("%d values of shape %v for %v", len(got), shape, sel)
				}
				again, _, err := ReadStrings(ctx, a, items...)
				if err != nil || !slices.Equal(again, got) {
					t.Fatalf("second read %q %v, first %q", again, err, got)
				}
			case dtype.TypeVarBytes:
				got, _, err := ReadByteStrings(ctx, a, items...)
				if failed(t, "ReadByteStrings", err) {
					return
				}
				sel, _ := a.Selection(items...)
				if len(got) != sel.NumElements() {
					t.Fatalf("%d values for %v", len(got), sel)
				}
			default:
				if _, _, err := ReadStrings(ctx, a, items...); err != nil && !errors.Is(err, ErrTypeMismatch) && !knownErr(err) {
					t.Fatalf("ReadStrings of %s: %v", m.DataType, err)
				}
			}
			_, _, err = a.ReadBytes(ctx, items...)
			if err != nil && !errors.Is(err, codecs.ErrVLenUnbound) {
				failed(t, "ReadBytes", err)
			}
		})
	})
}

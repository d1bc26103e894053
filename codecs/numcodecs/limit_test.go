package numcodecs

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/gozarr/gozarr/codecs"
)

// TestOverLimitIsLimitError (issue 27): lz4, HDF5's lz4 and lzma (every
// format) report output over the decode limit as a *codecs.LimitError
// (with ErrCorrupt, as the other codecs do) saying "limit", so readers of
// variable-length data tell "over a limit" from corrupt; the same data
// decodes with room for it.
func TestOverLimitIsLimitError(t *testing.T) {
	src := bytes.Repeat([]byte("gozarr limit "), 400)
	h5, err := NewLZ4H5(1024)
	if err != nil {
		t.Fatal(err)
	}
	cs := map[string]codecs.BytesToBytes{"lz4": NewLZ4(1), "lz4h5": h5}
	for name, format := range map[string]int{"xz": lzmaFormatXZ, "alone": lzmaFormatAlone, "raw": lzmaFormatRaw} {
		var filters []byte
		if format == lzmaFormatRaw {
			filters = []byte(`[{"id": 33}]`)
		}
		l, err := NewLZMA(format, -1, nil, filters)
		if err != nil {
			t.Fatal(err)
		}
		cs["lzma-"+name] = l
	}
	for name, c := range cs {
		enc, err := c.Encode(nil, src)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if out, err := c.Decode(nil, enc, len(src)); err != nil || !bytes.Equal(out, src) {
			t.Fatalf("%s: decode with room: %d bytes, %v", name, len(out), err)
		}
		_, err = c.Decode(nil, enc, len(src)-1)
		var le *codecs.LimitError
		if !errors.As(err, &le) || le.Limit != len(src)-1 || !errors.Is(err, codecs.ErrCorrupt) || !strings.Contains(err.Error(), "limit") {
			t.Errorf("%s: decode over the limit: %v; want a LimitError of %d", name, err, len(src)-1)
		}
	}
}

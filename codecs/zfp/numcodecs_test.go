package zfp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/internal/npy"
)

// TestNumcodecsFixtures decodes numcodecs' fixture/zfpy streams (pip's
// zfpy, 64-bit stream words; a subset in ../testdata/zfp/numcodecs, see
// SOURCE) through the codec built from each fixture's config.json: every
// stream gives the array's values in its memory order (older numcodecs
// flattened arrays, F order included, before zfpy). Encoding the same
// values gives the same stream up to pip's word padding.
func TestNumcodecsFixtures(t *testing.T) {
	dir := filepath.Join(refDir, "numcodecs")
	for c := 0; c < 4; c++ {
		raw, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("codec.%02d", c), "config.json"))
		if err != nil {
			t.Fatal(err)
		}
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(raw, &obj); err != nil {
			t.Fatal(err)
		}
		delete(obj, "id")
		cfg, _ := json.Marshal(obj)
		for i := 0; i < 8; i++ {
			arr, err := npy.ReadFile(filepath.Join(dir, fmt.Sprintf("array.%02d.npy", i)))
			if err != nil {
				t.Fatal(err)
			}
			// The streams of all four codecs are the same (all reversible);
			// codec.00's are checked in.
			enc, err := os.ReadFile(filepath.Join(dir, "codec.00", fmt.Sprintf("encoded.%02d.dat", i)))
			if err != nil {
				t.Fatal(err)
			}
			dt, _, err := dtype.ParseNumpy(arr.Descr)
			if err != nil {
				t.Fatal(err)
			}
			ch, err := codecs.NewChain([]codecs.Spec{{Name: Name, Configuration: cfg}},
				codecs.ChunkRepr{Shape: arr.Shape, DType: dt, Fill: make([]byte, dt.Size())})
			if err != nil {
				t.Fatalf("codec %d array %d: %v", c, i, err)
			}
			got := make([]byte, len(arr.Data))
			if err := ch.Decode(got, enc); err != nil {
				t.Fatalf("codec %d array %d: %v", c, i, err)
			}
			if !bytes.Equal(got, arr.Data) {
				t.Errorf("codec %d array %d (%s %v): values differ", c, i, arr.Descr, arr.Shape)
			}
			h, _ := ReadHeader(enc)
			mine, err := Compress(nil, arr.Data, h.Type, h.Shape, h.Params)
			if err != nil {
				t.Fatal(err)
			}
			if len(mine) > len(enc) || !bytes.Equal(mine, enc[:len(mine)]) || len(enc)-len(mine) >= 8 ||
				bytes.Count(enc[len(mine):], []byte{0}) != len(enc)-len(mine) {
				t.Errorf("codec %d array %d: our stream (%d bytes) is not pip's (%d bytes) less its padding", c, i, len(mine), len(enc))
			}
		}
	}
}

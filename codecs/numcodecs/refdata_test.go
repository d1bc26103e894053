package numcodecs_test

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/codecs/numcodecs"
	"github.com/gozarr/gozarr/internal/refdata"
	"github.com/gozarr/gozarr/zarr"
)

// refV2 is a v2 reference array: its v3 codec chain and its chunk files.
type refV2 struct {
	name   string
	chain  *codecs.Chain
	chunks map[string][]byte
}

// loadRefV2 returns every v2 array of the reference corpus (written by
// zarr-python 3.4 with numcodecs 0.17) whose chain has a numcodecs codec.
func loadRefV2(t *testing.T) []refV2 {
	t.Helper()
	var out []refV2
	for _, c := range refdata.Cases(t) {
		if c.ZarrFormat != 2 {
			continue
		}
		dir := c.Dir()
		zarray, err := os.ReadFile(filepath.Join(dir, ".zarray"))
		if err != nil {
			t.Fatal(err)
		}
		md, err := zarr.ParseArrayMetadataV2(zarray, nil)
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		v3, err := md.ToV3()
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		uses := false
		for _, s := range v3.Codecs {
			uses = uses || strings.HasPrefix(s.Name, "numcodecs.")
		}
		if !uses {
			continue
		}
		chain, err := codecs.NewChain(v3.Codecs, codecs.ChunkRepr{Shape: v3.ChunkShape, DType: v3.DataType, Fill: v3.FillValue})
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		r := refV2{name: c.Name, chain: chain, chunks: map[string][]byte{}}
		err = filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
			if err != nil || e.IsDir() || strings.HasPrefix(e.Name(), ".z") {
				return err
			}
			data, err := os.ReadFile(p)
			r.chunks[strings.TrimPrefix(p, dir)] = data
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(r.chunks) == 0 {
			t.Fatalf("%s: no chunks", c.Name)
		}
		out = append(out, r)
	}
	return out
}

// TestRefdataFilters checks the numcodecs filters against numcodecs' own
// output: every stored chunk of a reference array with filters is
// decompressed, run back through the filters' decoders and then their
// encoders, and must come out byte for byte as numcodecs wrote it. The
// lz4 array is checked at the compressor level too (pierrec/lz4's
// C-compatible compressor matches liblz4).
func TestRefdataFilters(t *testing.T) {
	arrays := loadRefV2(t)
	if len(arrays) < 20 {
		t.Fatalf("only %d v2 reference arrays use numcodecs codecs", len(arrays))
	}
	filtered := 0
	for _, a := range arrays {
		cs := a.chain.Codecs()
		var b2b []codecs.BytesToBytes
		for _, c := range cs {
			if b, ok := c.(codecs.BytesToBytes); ok {
				b2b = append(b2b, b)
			}
		}
		n := a.chain.Repr().NumBytes()
		for key, stored := range a.chunks {
			// Whole-chain round trip.
			dec := make([]byte, n)
			if err := a.chain.Decode(dec, stored); err != nil {
				t.Fatalf("%s/%s: decode: %v", a.name, key, err)
			}
			enc, err := a.chain.Encode(nil, dec)
			if err != nil {
				t.Fatalf("%s/%s: encode: %v", a.name, key, err)
			}
			again := make([]byte, n)
			if err := a.chain.Decode(again, enc); err != nil || !bytes.Equal(again, dec) {
				t.Fatalf("%s/%s: re-encoded chunk decodes differently (%v)", a.name, key, err)
			}
			if _, ok := b2b[len(b2b)-1].(*numcodecs.LZ4); ok && !bytes.Equal(enc, stored) {
				t.Errorf("%s/%s: lz4 re-encoding differs from liblz4's (%d vs %d bytes)", a.name, key, len(enc), len(stored))
			}
			if len(b2b) < 2 {
				continue
			}
			// Filter level: strip the compressor, then decode and
			// re-encode the filters alone.
			comp := b2b[len(b2b)-1]
			filteredBytes, err := comp.Decode(nil, stored, 1<<30)
			if err != nil {
				t.Fatalf("%s/%s: %v", a.name, key, err)
			}
			cur := filteredBytes
			for i := len(b2b) - 2; i >= 0; i-- {
				if cur, err = b2b[i].Decode(nil, cur, 1<<30); err != nil {
					t.Fatalf("%s/%s: %s: %v", a.name, key, b2b[i].Name(), err)
				}
			}
			for i := 0; i < len(b2b)-1; i++ {
				if cur, err = b2b[i].Encode(nil, cur); err != nil {
					t.Fatalf("%s/%s: %s: %v", a.name, key, b2b[i].Name(), err)
				}
			}
			if !bytes.Equal(cur, filteredBytes) {
				t.Fatalf("%s/%s: filters re-encode to different bytes than numcodecs wrote", a.name, key)
			}
			filtered++
		}
	}
	if filtered == 0 {
		t.Fatal("no filtered chunk checked")
	}
	t.Logf("%d arrays, %d filtered chunks re-encoded byte for byte", len(arrays), filtered)
}

package blosc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/gozarr/gozarr/codecs/blosc/blosctest"
)

// cbloscFixture is one frame written by c-blosc 1.21 (bench/cblosc).
type cbloscFixture struct {
	Cname     string `json:"cname"`
	Clevel    int    `json:"clevel"`
	Shuffle   int    `json:"shuffle"`
	Typesize  int    `json:"typesize"`
	Blocksize int    `json:"blocksize"`
	Kind      int    `json:"kind"`
	N         int    `json:"n"`
	Seed      uint64 `json:"seed"`
	Offset    int    `json:"offset"`
	Length    int    `json:"length"`
}

func loadCBloscFixtures(t testing.TB) ([]cbloscFixture, []byte) {
	dir := filepath.Join("testdata", "cblosc")
	man, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Frames []cbloscFixture `json:"frames"`
	}
	if err := json.Unmarshal(man, &m); err != nil {
		t.Fatal(err)
	}
	all, err := os.ReadFile(filepath.Join(dir, "frames.bin"))
	if err != nil {
		t.Fatal(err)
	}
	return m.Frames, all
}

// TestCBloscFixtures decodes every c-blosc 1.21 fixture to its regenerated
// input, and checks that gozarr's encoder makes the same block size and
// split choices (header flags) for the same input and options.
func TestCBloscFixtures(t *testing.T) {
	fs, all := loadCBloscFixtures(t)
	if len(fs) < 1000 {
		t.Fatalf("only %d fixtures", len(fs))
	}
	identical, lz4Frames := 0, 0
	for _, f := range fs {
		name := fmt.Sprintf("%s/c%d/shuffle%d/ts%d/n%d/bs%d", f.Cname, f.Clevel, f.Shuffle, f.Typesize, f.N, f.Blocksize)
		frame := all[f.Offset : f.Offset+f.Length]
		src := blosctest.Data(blosctest.Kind(f.Kind), f.N, f.Typesize, f.Seed)
		got, err := Decompress(make([]byte, 0, f.N), frame, f.N)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if !bytes.Equal(got, src) {
			t.Errorf("%s: decoded bytes differ", name)
			continue
		}
		if raceEnabled && f.N > 1<<20 {
			continue
		}
		enc, err := Compress(nil, src, Options{Cname: f.Cname, Clevel: f.Clevel, Shuffle: Shuffle(f.Shuffle), Typesize: f.Typesize, Blocksize: f.Blocksize})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		hc, _ := ReadInfo(frame)
		hg, _ := ReadInfo(enc)
		if hc.BlockSize != hg.BlockSize || hc.Flags&^FlagMemcpyed != hg.Flags&^FlagMemcpyed || hc.TypeSize != hg.TypeSize {
			t.Errorf("%s: gozarr header bs %d flags %#x ts %d, c-blosc bs %d flags %#x ts %d",
				name, hg.BlockSize, hg.Flags, hg.TypeSize, hc.BlockSize, hc.Flags, hc.TypeSize)
		}
		if f.Cname == LZ4 {
			lz4Frames++
			if bytes.Equal(enc, frame) {
				identical++
			}
		}
	}
	// pierrec/lz4's CompressorCCompat reproduces LZ4_compress_fast, so
	// gozarr's lz4 frames are c-blosc's byte for byte.
	if identical != lz4Frames {
		t.Errorf("%d of %d lz4 frames identical to c-blosc's", identical, lz4Frames)
	}
}

package pcodec

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

// numberTypeOf maps a little-endian NumPy descr to a pcodec number type.
func numberTypeOf(descr string) (NumberType, bool) {
	m := map[string]NumberType{"<u2": U16, "<u4": U32, "<u8": U64, "<i2": I16, "<i4": I32, "<i8": I64,
		"<f2": F16, "<f4": F32, "<f8": F64, "|u1": U8, "|i1": I8}
	t, ok := m[descr]
	return t, ok
}

// fixtureDirs returns the numcodecs fixture directories to test: the subset
// checked in, and the whole of numcodecs' fixture/pcodec when
// PCODEC_NUMCODECS_FIXTURES names it.
func fixtureDirs() []string {
	dirs := []string{filepath.Join("testdata", "numcodecs")}
	if d := os.Getenv("PCODEC_NUMCODECS_FIXTURES"); d != "" {
		dirs = append(dirs, d)
	}
	return dirs
}

// TestNumcodecsFixtures decodes numcodecs' pcodec fixtures (written by
// numcodecs' PCodec through the Rust pcodec library) and compares them with
// the arrays they encode, byte for byte.
func TestNumcodecsFixtures(t *testing.T) {
	n := 0
	for _, dir := range fixtureDirs() {
		encs, _ := filepath.Glob(filepath.Join(dir, "codec.*", "encoded.*.dat"))
		if len(encs) == 0 {
			t.Fatalf("no fixtures in %s", dir)
		}
		for _, enc := range encs {
			var ci, ai int
			if _, err := fmt.Sscanf(filepath.Base(filepath.Dir(enc))+filepath.Base(enc), "codec.%02dencoded.%02d.dat", &ci, &ai); err != nil {
				t.Fatalf("%s: %v", enc, err)
			}
			arr, err := npy.ReadFile(filepath.Join(dir, fmt.Sprintf("array.%02d.npy", ai)))
			if err != nil {
				t.Fatal(err)
			}
			nt, ok := numberTypeOf(arr.Descr)
			if !ok {
				t.Fatalf("%s: dtype %s", enc, arr.Descr)
			}
			src, err := os.ReadFile(enc)
			if err != nil {
				t.Fatal(err)
			}
			// through the registered codec, configured as the fixture's
			// numcodecs config.json (minus "id") says
			codec := fixtureCodec(t, filepath.Join(filepath.Dir(enc), "config.json"))
			d, _, err := dtype.ParseNumpy(arr.Descr)
			if err != nil {
				t.Fatal(err)
			}
			repr := codecs.ChunkRepr{Shape: []int{len(arr.Data) / d.Size()}, DType: d, Fill: make([]byte, d.Size())}
			chain, err := codecs.Prepare([]codecs.Codec{codec}, repr, codecs.PrepareOptions{})
			if err != nil {
				t.Fatal(err)
			}
			got := make([]byte, len(arr.Data))
			if err := chain.Decode(got, src); err != nil {
				t.Errorf("%s (%s): %v", enc, nt, err)
				continue
			}
			if !bytes.Equal(got, arr.Data) {
				t.Errorf("%s (%s): decoded values differ", enc, nt)
			}
			n++
		}
	}
	t.Logf("%d fixtures decoded exactly", n)
}

func fixtureCodec(t *testing.T, path string) codecs.Codec {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(b, &obj); err != nil {
		t.Fatal(err)
	}
	if string(obj["id"]) != `"pcodec"` {
		t.Fatalf("%s: id %s", path, obj["id"])
	}
	delete(obj, "id")
	cfg, _ := json.Marshal(obj)
	c, err := codecs.New(codecs.Spec{Name: Name, Configuration: cfg})
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if err := c.(*Codec).CheckEncode(); err != nil {
		t.Errorf("%s: %v", path, err)
	}
	return c
}

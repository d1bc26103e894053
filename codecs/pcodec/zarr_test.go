package pcodec_test

import (
	"bytes"
	"context"
	"encoding/json"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/codecs/pcodec"
	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/store/fs"
	"github.com/gozarr/gozarr/store/mem"
	"github.com/gozarr/gozarr/zarr"
)

// TestZarrsArrays reads the pcodec arrays of zarrs' test data (v2 with the
// pcodec compressor, v3 with numcodecs.pcodec, written by zarr-python with
// numcodecs and pcodec 0.3): 10x10 float32 0..99 in 5x5 chunks.
func TestZarrsArrays(t *testing.T) {
	ctx := context.Background()
	want := make([]float32, 100)
	for i := range want {
		want[i] = float32(i)
	}
	for _, p := range []string{"v2/array_pcodec_C.zarr", "v3/array_pcodec.zarr", "v3_zarr_python/array_pcodec.zarr"} {
		s, err := fs.New(filepath.Join("testdata", "zarrs"))
		if err != nil {
			t.Fatal(err)
		}
		a, err := zarr.OpenArray(ctx, s, p)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		got, shape, err := zarr.Read[float32](ctx, a)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if len(shape) != 2 || shape[0] != 10 || shape[1] != 10 {
			t.Fatalf("%s: shape %v", p, shape)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("%s: element %d = %v, want %v", p, i, got[i], want[i])
			}
		}
	}
}

var zarrTypes = []dtype.DataType{dtype.TypeUint16, dtype.TypeUint32, dtype.TypeUint64, dtype.TypeInt16, dtype.TypeInt32, dtype.TypeInt64, dtype.TypeFloat16, dtype.TypeFloat32, dtype.TypeFloat64}

func randomChunkData(rng *rand.Rand, d dtype.DataType, n int) []byte {
	out := make([]byte, n*d.Size())
	walk := uint64(rng.Uint32())
	for i := range n {
		walk += uint64(rng.IntN(100))
		v := walk
		if d.Kind() == dtype.Float && i%2 == 0 {
			v = rng.Uint64() & 0x3fff_ffff_ffff_ffff // finite, any mantissa
			if d.Size() == 2 {
				v &= 0x3bff
			} else if d.Size() == 4 {
				v &= 0x3fff_ffff
			}
		}
		for b := range d.Size() {
			out[i*d.Size()+b] = byte(v >> (8 * b))
		}
	}
	return out
}

// TestWriteRead writes v3 and v2 arrays of every pcodec type through the
// library and reads them back.
func TestWriteRead(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(7, 8))
	for _, d := range zarrTypes {
		data := randomChunkData(rng, d, 37*41)
		s := mem.New()
		meta, err := zarr.NewArrayMetadata([]int{37, 41}, d, []int{16, 20})
		if err != nil {
			t.Fatal(err)
		}
		cfg, _ := json.Marshal(pcodec.DefaultConfig())
		meta.Codecs = []codecs.Spec{{Name: pcodec.Name, Configuration: cfg}}
		a, err := zarr.CreateArray(ctx, s, "v3", meta)
		if err != nil {
			t.Fatalf("%s: %v", d, err)
		}
		if err := a.WriteBytes(ctx, data); err != nil {
			t.Fatalf("%s: %v", d, err)
		}
		m2 := &zarr.ArrayMetadataV2{Shape: []int{37, 41}, Chunks: []int{16, 20}, DataType: d, Order: "C"}
		c, err := zarr.NewNumcodec("pcodec", map[string]any{"level": 8, "mode_spec": "auto", "delta_spec": "auto", "paging_spec": "equal_pages_up_to", "delta_encoding_order": nil, "equal_pages_up_to": 262144})
		if err != nil {
			t.Fatal(err)
		}
		m2.Compressor = &c
		a2, err := zarr.CreateArrayV2(ctx, s, "v2", m2)
		if err != nil {
			t.Fatalf("%s v2: %v", d, err)
		}
		if err := a2.WriteBytes(ctx, data); err != nil {
			t.Fatalf("%s v2: %v", d, err)
		}
		for _, p := range []string{"v3", "v2"} {
			b, err := zarr.OpenArray(ctx, s, p)
			if err != nil {
				t.Fatalf("%s %s: %v", d, p, err)
			}
			got, _, err := b.ReadBytes(ctx)
			if err != nil {
				t.Fatalf("%s %s: %v", d, p, err)
			}
			if !bytes.Equal(got, data) {
				t.Fatalf("%s %s: read back other values", d, p)
			}
		}
	}
}

// TestZarrPythonReads asks zarr-python 3.4 (the chroot) to read arrays
// gozarr wrote with pcodec. Its numcodecs needs the pcodec Python package,
// which Debian does not package, so the test skips when it is missing.
func TestZarrPythonReads(t *testing.T) {
	tool := "../../../shared/tools/zarr-python"
	if _, err := os.Stat(tool); err != nil {
		t.Skipf("no zarr-python chroot tool: %v", err)
	}
	out, err := exec.Command(tool, "-c", "import numcodecs.pcodec").CombinedOutput()
	if err != nil {
		t.Skipf("zarr-python's numcodecs cannot load pcodec (the pcodec package is not installed: PyPI is out of reach and Debian has no python3-pcodec): %s", lastLine(out))
	}
	ctx := context.Background()
	dir := t.TempDir()
	s, err := fs.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(9, 10))
	for _, d := range zarrTypes {
		data := randomChunkData(rng, d, 30*7)
		meta, err := zarr.NewArrayMetadata([]int{30, 7}, d, []int{16, 7})
		if err != nil {
			t.Fatal(err)
		}
		meta.Codecs = []codecs.Spec{{Name: pcodec.Name}}
		a, err := zarr.CreateArray(ctx, s, d.Name(), meta)
		if err != nil {
			t.Fatal(err)
		}
		if err := a.WriteBytes(ctx, data); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, d.Name()+".raw"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		script := `import sys, numpy as np, zarr
a = zarr.open_array(sys.argv[1] + "/" + sys.argv[2], mode="r")
want = np.fromfile(sys.argv[1] + "/" + sys.argv[2] + ".raw", dtype=a.dtype.newbyteorder("<")).reshape(a.shape)
assert np.array_equal(a[...].view(want.dtype), want), "values differ"
`
		if out, err := exec.Command(tool, "-c", script, dir, d.Name()).CombinedOutput(); err != nil {
			t.Errorf("%s: zarr-python: %v: %s", d, err, out)
		}
	}
}

func lastLine(b []byte) string {
	b = bytes.TrimSpace(b)
	if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
		return string(b[i+1:])
	}
	return string(b)
}

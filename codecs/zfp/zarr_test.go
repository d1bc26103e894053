package zfp_test

import (
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/internal/npy"
	"github.com/gozarr/gozarr/internal/refdata"
	"github.com/gozarr/gozarr/store/fs"
	"github.com/gozarr/gozarr/zarr"
)

const arraysDir = "../testdata/zfp/arrays"

// TestZarrPythonArrays reads the arrays zarr-python 3.4 wrote with
// numcodecs' ZFPY (v3 "numcodecs.zfpy", sharded, v2 "zfpy"; gen_arrays.py)
// and compares them bit for bit with zarr-python's own reading.
func TestZarrPythonArrays(t *testing.T) {
	ctx := context.Background()
	st, err := fs.New(arraysDir, fs.ReadOnly())
	if err != nil {
		t.Fatal(err)
	}
	names, _ := filepath.Glob(filepath.Join(arraysDir, "*.zarr"))
	if len(names) < 9 {
		t.Fatalf("%d arrays in %s", len(names), arraysDir)
	}
	for _, p := range names {
		name := strings.TrimSuffix(filepath.Base(p), ".zarr")
		t.Run(name, func(t *testing.T) {
			want, err := npy.ReadFile(filepath.Join(arraysDir, name+".npy"))
			if err != nil {
				t.Fatal(err)
			}
			a, err := zarr.OpenArray(ctx, st, name+".zarr")
			if err != nil {
				t.Fatal(err)
			}
			got, shape, err := a.ReadBytes(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(shape, want.Shape) || string(got) != string(want.Data) {
				t.Fatalf("read %v %d bytes, zarr-python %v %d bytes (or other values)", shape, len(got), want.Shape, len(want.Data))
			}
		})
	}
}

// writeCase is an array gozarr writes for zarr-python to read.
type writeCase struct {
	name   string
	dt     dtype.DataType
	shape  []int
	chunks []int
	v2     bool
	cfg    string // the numcodecs.zfpy configuration (v2: the compressor without "id")
	shard  []int  // inner chunk shape, for a sharded v3 array
}

var writeCases = []writeCase{
	{name: "f8_rate", dt: dtype.TypeFloat64, shape: []int{10, 13}, chunks: []int{4, 5}, cfg: `{"mode": 2, "rate": 12}`},
	{name: "f4_tolerance", dt: dtype.TypeFloat32, shape: []int{7, 9, 6}, chunks: []int{4, 4, 5}, cfg: `{"mode": 4, "tolerance": 0.001}`},
	{name: "f4_precision_4d", dt: dtype.TypeFloat32, shape: []int{3, 5, 6, 5}, chunks: []int{2, 5, 4, 5}, cfg: `{"mode": 3, "precision": 14}`},
	{name: "i4_precision", dt: dtype.TypeInt32, shape: []int{50}, chunks: []int{16}, cfg: `{"mode": 3, "precision": 20}`},
	{name: "i8_reversible", dt: dtype.TypeInt64, shape: []int{5, 6, 7, 3}, chunks: []int{3, 4, 5, 2}, cfg: `{"mode": 4}`},
	{name: "f8_reversible", dt: dtype.TypeFloat64, shape: []int{9, 9}, chunks: []int{5, 5}, cfg: `{"mode": 2, "rate": -1}`},
	{name: "f4_sharded", dt: dtype.TypeFloat32, shape: []int{12, 10}, chunks: []int{6, 10}, shard: []int{3, 5}, cfg: `{"mode": 3, "precision": 16}`},
	{name: "v2_f8_tolerance", v2: true, dt: dtype.TypeFloat64, shape: []int{11, 8}, chunks: []int{4, 4},
		cfg: `{"mode": 4, "tolerance": 0.01, "rate": -1, "precision": -1, "compression_kwargs": {"tolerance": 0.01}}`},
	{name: "v2_i4_rate", v2: true, dt: dtype.TypeInt32, shape: []int{6, 7}, chunks: []int{6, 4},
		cfg: `{"mode": 2, "tolerance": -1, "rate": 10, "precision": -1, "compression_kwargs": {"rate": 10}}`},
}

// values returns smooth values with noise, little-endian, for dt.
func values(dt dtype.DataType, n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 1))
	out := make([]byte, n*dt.Size())
	for i := 0; i < n; i++ {
		v := 800*math.Sin(float64(i)/7) + r.NormFloat64()*4
		switch dt {
		case dtype.TypeFloat32:
			putLE(out[4*i:], uint64(math.Float32bits(float32(v))), 4)
		case dtype.TypeFloat64:
			putLE(out[8*i:], math.Float64bits(v), 8)
		case dtype.TypeInt32:
			putLE(out[4*i:], uint64(int32(v*100)), 4)
		case dtype.TypeInt64:
			putLE(out[8*i:], uint64(int64(v*1e6)), 8)
		}
	}
	return out
}

func putLE(b []byte, v uint64, n int) {
	for i := 0; i < n; i++ {
		b[i] = byte(v >> (8 * i))
	}
}

func (c writeCase) create(ctx context.Context, t *testing.T, st *fs.Store) *zarr.Array {
	t.Helper()
	if c.v2 {
		var cfg map[string]any
		if err := json.Unmarshal([]byte(c.cfg), &cfg); err != nil {
			t.Fatal(err)
		}
		comp, err := zarr.NewNumcodec("zfpy", cfg)
		if err != nil {
			t.Fatal(err)
		}
		a, err := zarr.CreateArrayV2(ctx, st, c.name+".zarr", &zarr.ArrayMetadataV2{
			Shape: c.shape, Chunks: c.chunks, DataType: c.dt, Compressor: &comp, FillValue: make([]byte, c.dt.Size()),
		})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	spec := codecs.Spec{Name: "numcodecs.zfpy", Configuration: json.RawMessage(c.cfg)}
	specs := []codecs.Spec{spec}
	if c.shard != nil {
		inner, _ := json.Marshal([]codecs.Spec{spec})
		cfg, _ := json.Marshal(map[string]any{
			"chunk_shape":  c.shard,
			"codecs":       json.RawMessage(inner),
			"index_codecs": []any{map[string]any{"name": "bytes", "configuration": map[string]any{"endian": "little"}}, map[string]any{"name": "crc32c"}},
		})
		specs = []codecs.Spec{{Name: "sharding_indexed", Configuration: cfg}}
	}
	a, err := zarr.CreateArray(ctx, st, c.name+".zarr", &zarr.ArrayMetadata{
		Shape: c.shape, ChunkShape: c.chunks, DataType: c.dt, ChunkKeyEncoding: zarr.DefaultKeyEncoding(),
		FillValue: make([]byte, c.dt.Size()), Codecs: specs,
	})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestZarrPythonReadsGozarr writes arrays with numcodecs.zfpy (every mode,
// v3, sharded and v2) and has zarr-python 3.4 in the reference chroot read
// them (the values gozarr reads back, bit for bit) and write the same
// values into the same metadata (the chunk files gozarr wrote, byte for
// byte): check_gozarr.py. It skips without the chroot.
func TestZarrPythonReadsGozarr(t *testing.T) {
	tool := pythonTool(t)
	ctx := context.Background()
	dir := t.TempDir()
	if os.Getenv("GOZARR_KEEP") != "" {
		dir = os.Getenv("GOZARR_KEEP")
	}
	// The chroot sees /tmp; make the directory world-readable there.
	st, err := fs.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range writeCases {
		a := c.create(ctx, t, st)
		n := 1
		for _, s := range c.shape {
			n *= s
		}
		orig := values(c.dt, n, uint64(i))
		if err := a.WriteBytes(ctx, orig); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		dec, shape, err := a.ReadBytes(ctx)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		descr := c.dt.NumpyDescr()
		if err := npy.WriteFile(filepath.Join(dir, c.name+".orig.npy"), descr, c.shape, orig); err != nil {
			t.Fatal(err)
		}
		if err := npy.WriteFile(filepath.Join(dir, c.name+".dec.npy"), descr, shape, dec); err != nil {
			t.Fatal(err)
		}
	}
	script, err := filepath.Abs("../testdata/zfp/check_gozarr.py")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(tool, script, dir)
	cmd.Env = append(os.Environ(), "REFPY_BIND="+filepath.Dir(script)+":"+dir+":/tmp")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if got := strings.Count(string(out), " ok:"); got != len(writeCases) {
		t.Fatalf("%d arrays checked, want %d:\n%s", got, len(writeCases), out)
	}
	t.Logf("%s", out)
}

// pythonTool returns the zarr-python chroot runner, or skips t.
func pythonTool(t *testing.T) string { return refdata.PythonTool(t) }

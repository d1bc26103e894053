package zfp

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/dtype"
)

func chain(t testing.TB, cfg string, dt dtype.DataType, shape []int) *codecs.Chain {
	t.Helper()
	c, err := codecs.NewChain([]codecs.Spec{{Name: Name, Configuration: json.RawMessage(cfg)}},
		codecs.ChunkRepr{Shape: shape, DType: dt, Fill: make([]byte, dt.Size())})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// randomChunk returns random values of dt: raw bit patterns (NaNs,
// infinities, subnormals) when raw, else smooth values.
func randomChunk(dt dtype.DataType, n int, raw bool, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 7))
	b := make([]byte, n*dt.Size())
	for i := 0; i < n; i++ {
		v := 1e4*math.Sin(float64(i)/9) + r.NormFloat64()
		var u uint64
		switch {
		case raw:
			u = r.Uint64()
		case dt == dtype.TypeFloat32:
			u = uint64(math.Float32bits(float32(v)))
		case dt == dtype.TypeFloat64:
			u = math.Float64bits(v)
		default:
			u = uint64(int64(v))
		}
		for k := 0; k < dt.Size(); k++ {
			b[i*dt.Size()+k] = byte(u >> (8 * k))
		}
	}
	return b
}

// TestCodecRoundTrip runs every type and mode through a resolved chain:
// reversible configurations give the chunk back bit for bit, lossy ones
// decode to what Decompress gives (and fixed accuracy within its
// tolerance).
func TestCodecRoundTrip(t *testing.T) {
	shapes := [][]int{{33}, {6, 11}, {5, 4, 9}, {3, 4, 5, 6}}
	types := []dtype.DataType{dtype.TypeFloat32, dtype.TypeFloat64, dtype.TypeInt32, dtype.TypeInt64}
	lossless := []string{`{"mode": 4}`, `{"mode": 4, "tolerance": -1}`, `{"mode": 2, "rate": -1}`, `{"mode": 3, "precision": -1}`, `{"mode": 5}`, `null`}
	lossy := []string{`{"mode": 2, "rate": 10}`, `{"mode": 3, "precision": 18}`, `{"mode": 4, "tolerance": 0.01}`}
	for si, shape := range shapes {
		for ti, dt := range types {
			n := 1
			for _, s := range shape {
				n *= s
			}
			for _, raw := range []bool{false, true} {
				src := randomChunk(dt, n, raw, uint64(si*10+ti))
				for _, cfg := range append(lossless, lossy...) {
					c := chain(t, cfg, dt, shape)
					enc, err := c.Encode(nil, src)
					if err != nil {
						t.Fatalf("%s %v %s: %v", dt, shape, cfg, err)
					}
					if len(enc) > c.MaxEncodedSize() {
						t.Errorf("%s %v %s: %d bytes, MaxEncodedSize %d", dt, shape, cfg, len(enc), c.MaxEncodedSize())
					}
					dst := make([]byte, len(src))
					if err := c.Decode(dst, enc); err != nil {
						t.Fatalf("%s %v %s: %v", dt, shape, cfg, err)
					}
					isLossless := bytes.Contains([]byte(cfg), []byte("-1")) || cfg == `{"mode": 4}` || cfg == `{"mode": 5}` || cfg == "null"
					if isLossless && !bytes.Equal(dst, src) {
						t.Errorf("%s %v %s: lossless round trip differs", dt, shape, cfg)
					}
					want := make([]byte, len(src))
					if _, err := Decompress(want, enc); err != nil || !bytes.Equal(want, dst) {
						t.Errorf("%s %v %s: chain decode differs from Decompress (%v)", dt, shape, cfg, err)
					}
				}
			}
		}
	}
}

func TestCodecConfig(t *testing.T) {
	good := []string{
		`{"mode": 4, "tolerance": 0.001}`,
		`{"mode": 4, "tolerance": 0.01, "rate": -1, "precision": -1, "compression_kwargs": {"tolerance": 0.01}}`,
		`{"mode": 2, "rate": 8}`, `{"mode": 3, "precision": 0}`, `{}`,
	}
	for _, cfg := range good {
		c, err := NewCodec(json.RawMessage(cfg))
		if err != nil {
			t.Errorf("%s: %v", cfg, err)
			continue
		}
		if err := c.CheckEncode(); err != nil {
			t.Errorf("%s: CheckEncode: %v", cfg, err)
		}
		b, _ := json.Marshal(c.Configuration())
		again, err := NewCodec(b)
		if err != nil || again.cfg.Mode != c.cfg.Mode {
			t.Errorf("%s: configuration %s does not round trip: %v", cfg, b, err)
		}
	}
	for _, cfg := range []string{`{"mode": 9}`, `{"mode": 4, "tolerance": "x"}`, `{"mode": 4, "speed": 1}`, `{"mode": -1}`} {
		if _, err := NewCodec(json.RawMessage(cfg)); !errors.Is(err, codecs.ErrInvalidConfig) {
			t.Errorf("%s: %v, want ErrInvalidConfig", cfg, err)
		}
	}
	// Modes 0 and 1 decode (the header decides) but cannot encode; so
	// can't rates the header cannot hold.
	for _, cfg := range []string{`{"mode": 1}`, `{"mode": 0}`, `{"mode": 2, "rate": 1e6}`} {
		c, err := NewCodec(json.RawMessage(cfg))
		if err != nil {
			t.Fatal(err)
		}
		if err := c.CheckEncode(); !errors.Is(err, codecs.ErrInvalidConfig) {
			t.Errorf("%s: CheckEncode %v, want ErrInvalidConfig", cfg, err)
		}
	}
	// Rates too low for a float block's exponent are refused when encoding
	// (the C library overruns its buffer on them); integers take them.
	lowRate := chain(t, `{"mode": 2, "rate": 1}`, dtype.TypeFloat64, []int{8})
	if _, err := lowRate.Encode(nil, make([]byte, 64)); !errors.Is(err, codecs.ErrInvalidConfig) {
		t.Errorf("rate 1 on 1-D doubles: %v, want ErrInvalidConfig", err)
	}
	if _, err := chain(t, `{"mode": 2, "rate": 1}`, dtype.TypeInt32, []int{8}).Encode(nil, make([]byte, 32)); err != nil {
		t.Errorf("rate 1 on 1-D int32: %v", err)
	}
	// Types and shapes zfp cannot code are refused when the chain is resolved.
	for _, r := range []codecs.ChunkRepr{
		{Shape: []int{10}, DType: dtype.TypeUint16, Fill: make([]byte, 2)},
		{Shape: []int{}, DType: dtype.TypeFloat32, Fill: make([]byte, 4)},
		{Shape: []int{2, 2, 2, 2, 2}, DType: dtype.TypeFloat32, Fill: make([]byte, 4)},
		{Shape: []int{5000, 2, 2, 2}, DType: dtype.TypeFloat32, Fill: make([]byte, 4)},
	} {
		if _, err := codecs.NewChain([]codecs.Spec{{Name: Name}}, r); !errors.Is(err, codecs.ErrInvalidConfig) {
			t.Errorf("%v %v: %v, want ErrInvalidConfig", r.DType, r.Shape, err)
		}
	}
}

// TestCodecHostile: streams that do not fit the chunk are ErrCorrupt
// before any work, whatever they claim.
func TestCodecHostile(t *testing.T) {
	c := chain(t, `{"mode": 4}`, dtype.TypeFloat32, []int{4, 4})
	dst := make([]byte, 64)
	f32 := refStream(t, "f4_2d_rev") // 9x7 floats
	i32, _ := Compress(nil, make([]byte, 64), Int32, []int{4, 4}, Reversible())
	same, _ := Compress(nil, make([]byte, 64), Float32, []int{16}, Reversible())
	cases := map[string][]byte{
		"other size":           f32,
		"int32 stream":         i32,
		"2^40 values (2-D)":    header((1<<20-1)<<28|(1<<20-1)<<4|1<<2|2, 2048+128, false),
		"truncated":            f32[:len(f32)/2],
		"garbage":              bytes.Repeat([]byte{0xa5}, 200),
		"header and no blocks": same[:12],
	}
	for name, src := range cases {
		if err := c.Decode(dst, src); !errors.Is(err, codecs.ErrCorrupt) {
			t.Errorf("%s: %v, want ErrCorrupt", name, err)
		}
	}
	// A 1-D stream of the chunk's 16 values decodes into the 4x4 chunk,
	// as zarr-python reshapes what zfpy returns.
	if err := c.Decode(dst, same); err != nil {
		t.Errorf("16 values as 1-D: %v", err)
	}
}

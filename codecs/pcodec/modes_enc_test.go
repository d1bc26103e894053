package pcodec

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os/exec"
	"strings"
	"testing"

	"github.com/gozarr/gozarr/dtype"
)

// Data for the encoder's opt-in choices: IDs (dict mode), a smooth
// oscillation (conv1) and multiples of 1000 with a slowly drifting
// remainder (int mult whose secondary latents delta encode well).
const (
	kindIDs = iota
	kindWave
	kindDrift
	nKinds
)

func kindData(rng *rand.Rand, t NumberType, n, kind int) []byte {
	size := int(t.Bits() / 8)
	out := make([]byte, n*size)
	ids := make([]uint64, 40)
	for i := range ids {
		ids[i] = rng.Uint64()
	}
	walk := 0.0
	for i := range n {
		var v uint64
		switch kind {
		case kindIDs:
			v = ids[int(math.Abs(rng.NormFloat64())*8)%len(ids)]
		case kindWave:
			x := 100*math.Sin(float64(i)/7) + 30*math.Cos(float64(i)/3)
			if size >= 4 {
				x = 1e6*math.Sin(float64(i)/7) + 3e5*math.Cos(float64(i)/3) + 3*rng.NormFloat64()
			}
			switch t {
			case F64:
				v = math.Float64bits(x)
			case F32:
				v = uint64(math.Float32bits(float32(x)))
			case F16:
				v = uint64(dtype.Float16FromFloat32(float32(x)))
			default:
				v = uint64(int64(x))
			}
		case kindDrift:
			walk += rng.NormFloat64()
			switch t {
			case F64, F32, F16:
				v = uint64(int64(walk)) // bits of tiny floats: no use for int mult
			default:
				v = uint64(int64(walk)*1000 + int64(i/64%5))
			}
		}
		for b := range size {
			out[i*size+b] = byte(v >> (8 * b))
		}
	}
	return out
}

// chunkMetaOf returns the metadata of a stream's first chunk.
func chunkMetaOf(src []byte, nt NumberType) *chunkMeta {
	buf := append(append([]byte(nil), src...), make([]byte, readPadding)...)
	r := &bitReader{buf: buf, end: uint(len(src)) * 8}
	r.pos = 40 + 8
	power := uint(r.read(bitsVarintPower)) + 1
	r.read64(power)
	if r.align("") != nil {
		return nil
	}
	r.read(16)
	if r.read(8) == 0 {
		return nil
	}
	r.read(bitsChunkN)
	m, err := readChunkMeta(r, 4, nt)
	if err != nil {
		return nil
	}
	return m
}

// modeCases runs f over every type, size, data kind and the option sets of
// dict mode, conv1 (orders 1, 2 and 6; not on 64-bit types) and the
// defaults (secondary delta).
func modeCases(f func(name string, nt NumberType, src []byte, o EncodeOptions)) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, nt := range allTypes {
		for _, n := range []int{1, 7, 300, 5000} {
			for kind := range nKinds {
				def := DefaultEncodeOptions()
				dict, conv, both, conv1 := def, def, def, def
				dict.Dict = true
				conv.Conv1 = 6
				both.Dict, both.Conv1 = true, 2
				conv1.Conv1, conv1.PageN = 1, 1000
				for _, o := range []EncodeOptions{def, dict, conv, both, conv1} {
					if o.Conv1 > 0 && nt.Bits() == 64 {
						continue
					}
					src := kindData(rng, nt, n, kind)
					f(fmt.Sprintf("%s n=%d kind %d dict=%v conv1=%d", nt, n, kind, o.Dict, o.Conv1), nt, src, o)
				}
			}
		}
	}
}

// TestEncoderModes: dict mode, conv1 and secondary-latent delta streams
// decode to the input, and the encoder used each of them (and the
// pairings dict+conv1, int mult+secondary delta) somewhere.
func TestEncoderModes(t *testing.T) {
	seen := map[string]bool{}
	modeCases(func(name string, nt NumberType, src []byte, o EncodeOptions) {
		enc, err := Compress(nil, src, nt, o)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got := make([]byte, len(src))
		if err := Decompress(got, enc, nt); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !bytes.Equal(got, src) {
			t.Fatalf("%s: values differ", name)
		}
		m := chunkMetaOf(enc, nt)
		if m == nil {
			return
		}
		if o.Dict != (m.mode == modeDict) {
			t.Fatalf("%s: mode %d", name, m.mode)
		}
		if m.delta == deltaConv1 && o.Conv1 != len(m.weights) {
			t.Fatalf("%s: conv1 of order %d", name, len(m.weights))
		}
		if o.Conv1 == 0 && m.delta == deltaConv1 {
			t.Fatalf("%s: conv1 not asked for", name)
		}
		seen[fmt.Sprintf("mode%d/delta%d/sec%v", m.mode, m.delta, m.secDelta)] = true
	})
	for _, k := range []string{"mode4/delta0/secfalse", "mode4/delta1/secfalse", "mode4/delta3/secfalse", "mode0/delta3/secfalse",
		"mode1/delta1/sectrue", "mode1/delta1/secfalse"} {
		if !seen[k] {
			t.Errorf("no stream of kind %s (met: %v)", k, seen)
		}
	}
}

// TestConv1Smaller: on a smooth oscillation conv1 of order 6 beats the best
// consecutive order, and dict mode beats classic on IDs.
func TestConv1Smaller(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	wave := kindData(rng, I32, 20000, kindWave)
	auto, _ := Compress(nil, wave, I32, DefaultEncodeOptions())
	o := DefaultEncodeOptions()
	o.Conv1 = 6
	conv, _ := Compress(nil, wave, I32, o)
	if len(conv) >= len(auto) {
		t.Errorf("conv1 %d bytes, auto %d", len(conv), len(auto))
	}
	ids := kindData(rng, U64, 20000, kindIDs)
	cl, _ := Compress(nil, ids, U64, DefaultEncodeOptions())
	o = DefaultEncodeOptions()
	o.Dict = true
	dict, _ := Compress(nil, ids, U64, o)
	if len(dict) >= len(cl)/2 {
		t.Errorf("dict %d bytes, auto %d", len(dict), len(cl))
	}
	t.Logf("wave i32: auto %d, conv1 %d bytes; ids u64: auto %d, dict %d bytes", len(auto), len(conv), len(cl), len(dict))
}

// TestConv1Refused: conv1 on 64-bit numbers (dict mode too) and orders
// outside 0..32 are configuration errors, as in pco.
func TestConv1Refused(t *testing.T) {
	o := DefaultEncodeOptions()
	o.Conv1 = 2
	if _, err := Compress(nil, make([]byte, 80), F64, o); err == nil {
		t.Error("conv1 on f64 accepted")
	}
	o.Dict = true
	if _, err := Compress(nil, make([]byte, 80), U64, o); err == nil {
		t.Error("conv1 on u64 in dict mode accepted")
	}
	o.Dict = false
	o.Conv1 = 33
	if _, err := Compress(nil, make([]byte, 40), I32, o); err == nil {
		t.Error("conv1 order 33 accepted")
	}
}

// TestReferenceDecodesOurModes: the Rust pco library reads our dict, conv1
// and secondary-delta streams. The exception is pco 1.0.3's own: dict mode
// with conv1 on a page whose last batch is partial can make it report
// "dict index exceeded dict length" (it checks the indices of a whole
// batch buffer, unused places included). It does so on streams it wrote
// itself, and this test checks that too; Decompress reads them exactly.
func TestReferenceDecodesOurModes(t *testing.T) {
	ref := pcoref(t)
	const pcoBug = "dict index exceeded dict length"
	decode := func(enc []byte, nt NumberType) ([]byte, string) {
		cmd := exec.Command(ref, "d", nt.String())
		cmd.Stdin = bytes.NewReader(enc)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			return nil, stderr.String()
		}
		return out, ""
	}
	refused := 0
	modeCases(func(name string, nt NumberType, src []byte, o EncodeOptions) {
		enc, err := Compress(nil, src, nt, o)
		if err != nil {
			t.Fatal(err)
		}
		got, msg := decode(enc, nt)
		if msg != "" && o.Dict && o.Conv1 > 0 && strings.Contains(msg, pcoBug) {
			refused++
			return
		}
		if msg != "" || !bytes.Equal(got, src) {
			t.Fatalf("%s: the reference decodes other values: %s", name, msg)
		}
	})
	t.Logf("pco refused %d dict+conv1 streams of ours", refused)
	// pco's own dict+conv1 stream of 20 numbers: it refuses it, we read it.
	src := make([]byte, 4*20)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 20 {
		binary.LittleEndian.PutUint32(src[4*i:], uint32(rng.IntN(5))*1000003)
	}
	enc := runRef(t, ref, src, "c", "u32", "8", "dict", "conv1:2", "1000")
	if m := chunkMetaOf(enc, U32); m == nil || m.mode != modeDict || m.delta != deltaConv1 {
		t.Fatalf("pco did not write dict+conv1: %+v", m)
	}
	got := make([]byte, len(src))
	if err := Decompress(got, enc, U32); err != nil || !bytes.Equal(got, src) {
		t.Fatalf("pco's dict+conv1 stream: %v", err)
	}
	if refused > 0 {
		if _, msg := decode(enc, U32); !strings.Contains(msg, pcoBug) {
			t.Errorf("pco refused %d of our dict+conv1 streams but reads its own (%q): the fault may be ours", refused, msg)
		}
	}
}

package pcodec

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// pcoref returns the reference pcodec command (testdata/pcoref/build.sh
// builds it), or skips the test.
func pcoref(t *testing.T) string {
	p := os.Getenv("PCOREF")
	if p == "" {
		t.Skip("PCOREF is not set: build the reference with testdata/pcoref/build.sh to run this test")
	}
	if _, err := os.Stat(p); err != nil {
		t.Skipf("PCOREF=%s: %v", p, err)
	}
	return p
}

func runRef(t *testing.T, ref string, in []byte, args ...string) []byte {
	cmd := exec.Command(ref, args...)
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("pcoref %v: %v: %s", args, err, stderr.String())
	}
	return out
}

// TestReferenceDecodesOurs: the Rust pco library reads what Compress
// writes, for every type, data shape and option set.
func TestReferenceDecodesOurs(t *testing.T) {
	ref := pcoref(t)
	rng := rand.New(rand.NewPCG(3, 4))
	for _, nt := range allTypes {
		for _, n := range []int{0, 1, 300, 5000} {
			for shape := range nShapes {
				for _, o := range []EncodeOptions{DefaultEncodeOptions(), {Level: 3, DeltaOrder: 2, PageN: 700}} {
					src := genData(rng, nt, n, shape)
					enc, err := Compress(nil, src, nt, o)
					if err != nil {
						t.Fatal(err)
					}
					got := runRef(t, ref, enc, "d", nt.String())
					if !bytes.Equal(got, src) {
						t.Fatalf("%s n=%d shape %d %+v: the reference decodes other values", nt, n, shape, o)
					}
				}
			}
		}
	}
}

// TestOursDecodesReference: Decompress reads what the Rust pco library
// writes with its own mode and delta choices (int and float mult, float
// quant, lookback, conv1 where its auto picks them, dict mode and dict
// with conv1 where asked for).
func TestOursDecodesReference(t *testing.T) {
	ref := pcoref(t)
	rng := rand.New(rand.NewPCG(5, 6))
	deltas := []string{"auto", "noop", "consecutive:2", "lookback", "conv1:2", "conv1:6", "dict", "dict+conv1:2"}
	seen := map[[2]int]bool{}
	for _, nt := range allTypes {
		for _, n := range []int{1, 1000, 3000} {
			for shape := range nShapes {
				for _, d := range deltas {
					if strings.Contains(d, "conv") && nt.Bits() == 64 {
						continue
					}
					mode, delta := "auto", d
					if rest, ok := strings.CutPrefix(d, "dict"); ok {
						mode, delta = "dict", strings.TrimPrefix(rest, "+")
						if delta == "" {
							delta = "auto"
						}
					}
					src := genData(rng, nt, n, shape)
					enc := runRef(t, ref, src, "c", nt.String(), "8", mode, delta, "1000")
					if mode, delta, ok := firstChunkKind(enc, nt); ok {
						seen[[2]int{mode, delta}] = true
					}
					got := make([]byte, len(src))
					if err := Decompress(got, enc, nt); err != nil {
						t.Fatalf("%s n=%d shape %d delta %s: %v", nt, n, shape, d, err)
					}
					if !bytes.Equal(got, src) {
						t.Fatalf("%s n=%d shape %d delta %s: values differ", nt, n, shape, d)
					}
				}
			}
		}
	}
	// the data must have made the reference use every mode and every delta
	// encoding, and dict with conv1
	if !seen[[2]int{modeDict, deltaConv1}] {
		t.Errorf("no reference stream with dict mode and conv1")
	}
	for _, mode := range []int{modeClassic, modeIntMult, modeFloatMult, modeFloatQuant, modeDict} {
		for _, delta := range []int{deltaNone, deltaConsecutive, deltaLookback, deltaConv1} {
			if mode == modeClassic || delta == deltaNone {
				if !seen[[2]int{mode, delta}] {
					t.Errorf("no reference stream with mode %d and delta %d", mode, delta)
				}
			}
		}
	}
	t.Logf("mode/delta pairs met: %v", fmt.Sprint(seen))
}

// firstChunkKind returns the mode and delta encoding of a stream's first
// chunk.
func firstChunkKind(src []byte, nt NumberType) (int, int, bool) {
	buf := append(append([]byte(nil), src...), make([]byte, readPadding)...)
	r := &bitReader{buf: buf, end: uint(len(src)) * 8}
	r.pos = 40 + 8 // magic, version, uniform type
	power := uint(r.read(bitsVarintPower)) + 1
	r.read64(power)
	if r.align("") != nil {
		return 0, 0, false
	}
	r.read(16) // format version 4.x
	if r.read(8) == 0 {
		return 0, 0, false
	}
	r.read(bitsChunkN)
	m, err := readChunkMeta(r, 4, nt)
	if err != nil {
		return 0, 0, false
	}
	return m.mode, m.delta, true
}

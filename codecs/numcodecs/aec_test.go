package numcodecs_test

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/codecs/numcodecs"
)

// aecCase is one stream of testdata/aec/aec.json, written by libaec
// (make_aec.py): raw is libaec's input, enc its output and dec (when it
// differs from raw: signed samples, sign-extended) what libaec decodes.
type aecCase struct {
	Kind  string `json:"kind"`
	Bits  int    `json:"bits"`
	Block int    `json:"block"`
	RSI   int    `json:"rsi"`
	Flags int    `json:"flags"`
	DType string `json:"dtype"`
	Mask  int    `json:"mask"`
	PPB   int    `json:"ppb"`
	PPSL  int    `json:"ppsl"`
	Data  string `json:"data"`
	Raw   []byte `json:"raw"`
	Enc   []byte `json:"enc"`
	Dec   []byte `json:"dec,omitempty"`
}

func (c aecCase) String() string {
	if c.Kind == "szip" {
		return fmt.Sprintf("szip %s mask %d ppb %d ppsl %d %s", c.DType, c.Mask, c.PPB, c.PPSL, c.Data)
	}
	return fmt.Sprintf("aec %d bits block %d rsi %d flags %d %s (%d bytes)", c.Bits, c.Block, c.RSI, c.Flags, c.Data, len(c.Raw))
}

func (c aecCase) want() []byte {
	if c.Dec != nil {
		return c.Dec
	}
	return c.Raw
}

// codec returns the case's codec; szip streams get HDF5's size header
// (libsz writes none) so that they are what HDF5 stores.
func (c aecCase) codec(t testing.TB) (codecs.BytesToBytes, []byte) {
	t.Helper()
	if c.Kind == "szip" {
		s, err := numcodecs.NewSzip(c.Mask, c.PPB, c.Bits, c.PPSL, true)
		if err != nil {
			t.Fatal(err)
		}
		return s, append(binary.LittleEndian.AppendUint32(nil, uint32(len(c.Raw))), c.Enc...)
	}
	a, err := numcodecs.NewAEC(c.Bits, c.Flags, c.Block, c.RSI)
	if err != nil {
		t.Fatal(err)
	}
	return a, c.Enc
}

func loadAECCases(t testing.TB) []aecCase {
	t.Helper()
	b, err := os.ReadFile("testdata/aec/aec.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Cases []aecCase `json:"cases"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Cases) < 30 {
		t.Fatalf("%d cases in aec.json", len(doc.Cases))
	}
	return doc.Cases
}

// TestAECLibaecStreams decodes every stream libaec wrote and compares with
// what libaec decodes; then encodes the input and decodes that.
func TestAECLibaecStreams(t *testing.T) {
	for _, tc := range loadAECCases(t) {
		c, enc := tc.codec(t)
		got, err := c.Decode(nil, enc, len(tc.Raw))
		if err != nil || !bytes.Equal(got, tc.want()) {
			t.Errorf("%v: decode: %v (%d bytes, equal %v)", tc, err, len(got), bytes.Equal(got, tc.want()))
			continue
		}
		own, err := c.Encode(nil, tc.Raw)
		if err != nil {
			t.Errorf("%v: encode: %v", tc, err)
			continue
		}
		if len(own) > c.MaxEncodedSize(len(tc.Raw)) {
			t.Errorf("%v: %d bytes encoded, bound %d", tc, len(own), c.MaxEncodedSize(len(tc.Raw)))
		}
		got, err = c.Decode(nil, own, len(tc.Raw))
		if err != nil || !bytes.Equal(got, tc.want()) {
			t.Errorf("%v: own stream: %v", tc, err)
		}
		// Ours should not be much larger than libaec's.
		if len(own) > len(enc)*11/10+16 {
			t.Errorf("%v: ours %d bytes, libaec's %d", tc, len(own), len(enc))
		}
	}
}

// TestAECEncoderAgainstLibaec has libaec decode what gozarr's encoder
// writes for every case (make_aec.py check, in the reference chroot).
func TestAECEncoderAgainstLibaec(t *testing.T) {
	tool, _ := filepath.Abs("../../../shared/tools/zarr-python")
	if _, err := os.Stat("/tmp/refenv/usr/bin/python3"); err != nil {
		t.Skip("no reference chroot at /tmp/refenv (see ../shared/tools/zarr-python-env.sh): cannot run libaec")
	}
	if _, err := os.Stat(tool); err != nil {
		t.Skip("no ../shared/tools/zarr-python")
	}
	if testing.Short() {
		t.Skip("short")
	}
	// zarr-python-env.sh does not install libaec; a chroot made by it alone
	// has no library to check against (a skip, not a failure of gozarr's).
	if libs, _ := filepath.Glob("/tmp/refenv/usr/lib/*/libaec.so.0"); len(libs) == 0 {
		t.Skip("no libaec in the reference chroot: install it there (chroot /tmp/refenv apt-get install -y libaec0) to check gozarr's AEC streams against it")
	}
	cases := loadAECCases(t)
	for i, tc := range cases {
		c, _ := tc.codec(t)
		own, err := c.Encode(nil, tc.Raw)
		if err != nil {
			t.Fatal(err)
		}
		if tc.Kind == "szip" {
			own = own[4:]
		}
		cases[i].Enc = own
	}
	dir, err := os.MkdirTemp("/tmp", "aec")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	doc, _ := json.Marshal(map[string]any{"cases": cases})
	out := filepath.Join(dir, "aec_go.json")
	if err := os.WriteFile(out, doc, 0o644); err != nil {
		t.Fatal(err)
	}
	script, _ := filepath.Abs("testdata/aec/make_aec.py")
	cmd := exec.Command(tool, script, "check", out)
	msg, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(msg), fmt.Sprintf("%d/%d decoded equal", len(cases), len(cases))) {
		t.Fatalf("libaec on gozarr's streams: %v\n%s", err, msg)
	}
	t.Logf("%s", bytes.TrimSpace(msg))
}

func TestAECConfig(t *testing.T) {
	for _, spec := range []string{
		`{"name":"numcodecs.imagecodecs_szip","configuration":{"options_mask":141,"pixels_per_block":32,"bits_per_pixel":32,"pixels_per_scanline":120}}`,
		`{"name":"numcodecs.imagecodecs_szip","configuration":{"options_mask":141,"pixels_per_block":8,"bits_per_pixel":16,"pixels_per_scanline":8,"header":false}}`,
		`{"name":"numcodecs.imagecodecs_szip","configuration":{"options_mask":141,"pixels_per_block":8,"bits_per_pixel":16,"pixels_per_scanline":8,"optional":true}}`,
		`{"name":"numcodecs.imagecodecs_aec","configuration":{"bitspersample":16,"flags":8,"blocksize":16,"rsi":128}}`,
		`{"name":"numcodecs.imagecodecs_aec"}`,
	} {
		var s codecs.Spec
		if err := json.Unmarshal([]byte(spec), &s); err != nil {
			t.Fatal(err)
		}
		c, err := codecs.New(s)
		if err != nil {
			t.Errorf("%s: %v", spec, err)
			continue
		}
		// The configuration written back builds the same codec.
		back, _ := json.Marshal(c.Configuration())
		c2, err := codecs.New(codecs.Spec{Name: c.Name(), Configuration: back})
		if err != nil {
			t.Errorf("%s: configuration %s: %v", spec, back, err)
			continue
		}
		back2, _ := json.Marshal(c2.Configuration())
		if string(back) != string(back2) {
			t.Errorf("%s: %s then %s", spec, back, back2)
		}
	}
	if c, _ := codecs.New(codecs.Spec{Name: "numcodecs.imagecodecs_aec"}); c != nil {
		b, _ := json.Marshal(c.Configuration())
		if string(b) != `{"bitspersample":8,"flags":8,"blocksize":8,"rsi":2}` { // imagecodecs' decode defaults
			t.Errorf("defaults %s", b)
		}
	}
	for _, bad := range []string{
		`{"options_mask":141,"pixels_per_block":32,"bits_per_pixel":32}`,
		`{"options_mask":141,"pixels_per_block":7,"bits_per_pixel":32,"pixels_per_scanline":120}`,
		`{"options_mask":141,"pixels_per_block":64,"bits_per_pixel":32,"pixels_per_scanline":120}`,
		`{"options_mask":141,"pixels_per_block":8,"bits_per_pixel":33,"pixels_per_scanline":120}`,
		`{"options_mask":141,"pixels_per_block":8,"bits_per_pixel":0,"pixels_per_scanline":120}`,
		`{"options_mask":141,"pixels_per_block":8,"bits_per_pixel":8,"pixels_per_scanline":4}`,
		`{"options_mask":141,"pixels_per_block":8,"bits_per_pixel":8,"pixels_per_scanline":1000000}`,
		`{"options_mask":-1,"pixels_per_block":8,"bits_per_pixel":8,"pixels_per_scanline":8}`,
		`{"options_mask":141,"pixels_per_block":8,"bits_per_pixel":8,"pixels_per_scanline":8,"extra":1}`,
		`{"options_mask":141,"pixels_per_block":8,"bits_per_pixel":8,"pixels_per_scanline":8,"header":false,"optional":true}`,
	} {
		if _, err := codecs.New(codecs.Spec{Name: "numcodecs.imagecodecs_szip", Configuration: json.RawMessage(bad)}); !errors.Is(err, codecs.ErrInvalidConfig) {
			t.Errorf("szip %s: %v", bad, err)
		}
	}
	for _, bad := range []string{
		`{"bitspersample":0}`, `{"bitspersample":33}`, `{"blocksize":12}`, `{"blocksize":12,"flags":72}`[:0] + `{"blocksize":13,"flags":72}`,
		`{"blocksize":128}`, `{"rsi":0}`, `{"rsi":4097}`, `{"flags":128}`, `{"flags":-1}`, `{"flags":24,"bitspersample":5}`,
	} {
		if _, err := codecs.New(codecs.Spec{Name: "numcodecs.imagecodecs_aec", Configuration: json.RawMessage(bad)}); !errors.Is(err, codecs.ErrInvalidConfig) {
			t.Errorf("aec %s: %v", bad, err)
		}
	}
	if _, err := numcodecs.NewAEC(16, 72, 12, 8); err != nil { // not enforced: any even block size
		t.Error(err)
	}
}

// TestSzipOptional: the "optional" codec returns a chunk HDF5 stored
// without szip (exactly the decoded size, not starting with that size)
// as it is and decodes every other as szip; the plain codec refuses the
// raw chunk. (The HDF5 side: hdf5's szip_raw.h5 fixture.)
func TestSzipOptional(t *testing.T) {
	plain, err := numcodecs.NewSzip(141, 8, 16, 16, true)
	if err != nil {
		t.Fatal(err)
	}
	opt, err := plain.Optional()
	if err != nil {
		t.Fatal(err)
	}
	raw := make([]byte, 64)
	for i := range raw {
		raw[i] = byte(i*37 + 11)
	}
	got, err := opt.Decode(nil, raw, len(raw))
	if err != nil || !bytes.Equal(got, raw) {
		t.Errorf("raw chunk: %v, equal %v", err, bytes.Equal(got, raw))
	}
	if _, err := plain.Decode(nil, raw, len(raw)); err == nil {
		t.Error("the plain codec decoded a raw chunk")
	}
	// Coded chunks (shorter, or exactly the size with the header) decode.
	for _, src := range [][]byte{raw, make([]byte, 64)} {
		enc, err := opt.Encode(nil, src)
		if err != nil {
			t.Fatal(err)
		}
		got, err := opt.Decode(nil, enc, len(src))
		if err != nil || !bytes.Equal(got, src) {
			t.Errorf("coded chunk of %d bytes: %v", len(enc), err)
		}
	}
	// A raw chunk starting with the size is taken for a coded one.
	binary.LittleEndian.PutUint32(raw, 64)
	if got, err := opt.Decode(nil, raw, len(raw)); err == nil && bytes.Equal(got, raw) {
		t.Error("an ambiguous raw chunk was returned as it is")
	}
	bare, err := numcodecs.NewSzip(141, 8, 16, 16, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bare.Optional(); !errors.Is(err, codecs.ErrInvalidConfig) {
		t.Errorf("optional without header: %v", err)
	}
}

// TestAECHostile: truncated streams, absurd headers and sizes, garbage.
func TestAECHostile(t *testing.T) {
	cases := loadAECCases(t)
	for _, tc := range cases {
		c, enc := tc.codec(t)
		// Every cut (strided for long streams) is an error, never a panic.
		step := max(1, len(enc)/50)
		for cut := 0; cut < len(enc)-8; cut += step {
			_, err := c.Decode(nil, enc[:cut], len(tc.Raw))
			if err == nil && len(tc.Raw) > 0 {
				// A cut in the final padding bits may still decode.
				if cut < len(enc)-8 {
					t.Errorf("%v: cut at %d of %d decodes", tc, cut, len(enc))
				}
			} else if err != nil && !errors.Is(err, codecs.ErrCorrupt) {
				t.Errorf("%v: cut at %d: %v", tc, cut, err)
			}
		}
		// Flipped bytes: an error or some output, never a panic.
		for i := 0; i < len(enc); i += max(1, len(enc)/20) {
			bad := bytes.Clone(enc)
			bad[i] ^= 0xA5
			if _, err := c.Decode(nil, bad, len(tc.Raw)); err != nil && !errors.Is(err, codecs.ErrCorrupt) {
				t.Errorf("%v: flipped byte %d: %v", tc, i, err)
			}
		}
	}
	s, _ := numcodecs.NewSzip(141, 32, 32, 128, true)
	// A header of 4 GiB, a limit of 1 MiB: refused before allocating.
	if _, err := s.Decode(nil, []byte{0xff, 0xff, 0xff, 0xff, 0, 0}, 1<<20); !errors.Is(err, codecs.ErrCorrupt) || !strings.Contains(err.Error(), "header says") {
		t.Errorf("huge header: %v", err)
	}
	if _, err := s.Decode(nil, []byte{1, 2}, 100); !errors.Is(err, codecs.ErrCorrupt) {
		t.Errorf("short header: %v", err)
	}
	if _, err := s.Decode(nil, []byte{6, 0, 0, 0, 0, 0}, 100); !errors.Is(err, codecs.ErrCorrupt) {
		t.Errorf("6 bytes of 32-bit pixels: %v", err)
	}
	// A zero-block bomb: runs of zero blocks fill at most the limit.
	a, _ := numcodecs.NewAEC(8, 8, 8, 4096)
	bomb := bytes.Repeat([]byte{0x01, 0x10, 0x04, 0x40}, 1000) // id 000, bit 0, fs 4 (ROS) ...
	if out, err := a.Decode(nil, bomb, 1<<16); err == nil && len(out) != 1<<16 {
		t.Errorf("bomb: %d bytes", len(out))
	}
	// Empty input, empty output.
	if out, err := a.Decode(nil, nil, 0); err != nil || len(out) != 0 {
		t.Errorf("empty: %v %d", err, len(out))
	}
	if _, err := a.Decode(nil, nil, 10); !errors.Is(err, codecs.ErrCorrupt) {
		t.Errorf("nothing for 10 bytes: %v", err)
	}
}

// TestAECRoundTrip: the encoder and decoder over inputs and parameters the
// fixtures do not have (PAD_RSI among them, which libaec's encoder does
// not write).
func TestAECRoundTrip(t *testing.T) {
	for _, in := range hdf5Inputs() {
		for _, p := range [][4]int{{8, 8, 8, 2}, {8, 32, 8, 4096}, {8, 40, 16, 3}, {16, 8, 16, 64}, {16, 12, 32, 128}, {8, 0, 64, 1}, {1, 8, 8, 8}, {4, 24, 16, 5}} {
			c, err := numcodecs.NewAEC(p[0], p[1], p[2], p[3])
			if err != nil {
				t.Fatal(err)
			}
			in := in[:len(in)/2*2]
			enc, err := c.Encode(nil, in)
			if err != nil {
				t.Fatal(err)
			}
			if len(enc) > c.MaxEncodedSize(len(in)) {
				t.Errorf("%v: %d > bound %d", p, len(enc), c.MaxEncodedSize(len(in)))
			}
			got, err := c.Decode(nil, enc, len(in))
			want := in
			if p[0] < 8 { // bits above n are dropped
				want = bytes.Clone(in)
				for i := range want {
					want[i] &= 1<<p[0] - 1
				}
			}
			if err != nil || !bytes.Equal(got, want) {
				t.Errorf("%v, %d bytes: %v", p, len(in), err)
			}
		}
	}
}

func FuzzAECDecode(f *testing.F) {
	for i, tc := range loadAECCases(f) {
		if i%3 == 0 && len(tc.Enc) < 4000 {
			if tc.Kind == "szip" {
				f.Add(tc.Enc, uint16(len(tc.Raw)), uint8(tc.Bits), uint8(tc.PPB), uint16(tc.PPSL), uint8(tc.Mask), true)
			} else {
				f.Add(tc.Enc, uint16(len(tc.Raw)), uint8(tc.Bits), uint8(tc.Block), uint16(tc.RSI), uint8(tc.Flags), false)
			}
		}
	}
	f.Fuzz(func(t *testing.T, src []byte, size uint16, nbits, block uint8, rsi uint16, flags uint8, szip bool) {
		var c codecs.BytesToBytes
		if szip {
			s, err := numcodecs.NewSzip(int(flags), int(block), int(nbits), int(rsi), false)
			if err != nil {
				return
			}
			c = s
		} else {
			a, err := numcodecs.NewAEC(int(nbits), int(flags), int(block), int(rsi))
			if err != nil {
				return
			}
			c = a
		}
		out, err := c.Decode(nil, src, int(size))
		if err != nil {
			if !errors.Is(err, codecs.ErrCorrupt) {
				t.Fatalf("error %v not ErrCorrupt", err)
			}
			return
		}
		if len(out) > int(size) {
			t.Fatalf("%d bytes out, limit %d", len(out), size)
		}
		// What decodes re-encodes to a stream that decodes to the same.
		enc, err := c.Encode(nil, out)
		if err != nil {
			return
		}
		back, err := c.Decode(nil, enc, len(out))
		if err != nil {
			t.Fatalf("re-encoded stream: %v", err)
		}
		if !szip && !bytes.Equal(back, out) {
			a := c.(*numcodecs.AEC)
			cfg, _ := json.Marshal(a.Configuration())
			// Signed samples come back sign-extended; compare re-decoded.
			again, _ := c.Encode(nil, back)
			back2, _ := c.Decode(nil, again, len(back))
			if !bytes.Equal(back2, back) {
				t.Fatalf("%s: re-encoded stream decodes differently", cfg)
			}
		}
	})
}

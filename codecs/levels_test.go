package codecs_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/codecs/numcodecs"
	"github.com/gozarr/gozarr/dtype"
)

// TestLevelsReadLenient checks finding 16 of issue 11: a compression level
// out of the encoder's range (gzip -1 and zstd 100 as numcodecs writes
// them, blosc clevel 10, ...) builds a codec and a chain that decode and
// keep the level in metadata, while CheckEncode, Chain.CheckEncode and
// Encode refuse it with ErrInvalidConfig naming the level (bz2, which has
// no encoder, with ErrUnsupported whatever its level).
func TestLevelsReadLenient(t *testing.T) {
	data := bytes.Repeat([]byte("a level only matters to the encoder; "), 40)
	bz2, err := os.ReadFile("numcodecs/testdata/python/ints.bz2")
	if err != nil {
		t.Fatal(err)
	}
	bz2Raw, err := os.ReadFile("numcodecs/testdata/python/ints.raw")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, cfg string
		good      string // a configuration that encodes (empty: enc below)
		enc, dec  []byte // for codecs with no encoder
		key       string // the level's name in errors ("" when it encodes)
		want      error
	}{
		{"gzip", `{"level":-1}`, `{"level":6}`, nil, nil, "level -1 is not in 0..9", codecs.ErrInvalidConfig},
		{"gzip", `{"level":10}`, `{"level":6}`, nil, nil, "level 10 is not in 0..9", codecs.ErrInvalidConfig},
		{"gzip", `{"level":100}`, `{"level":6}`, nil, nil, "level 100 is not in 0..9", codecs.ErrInvalidConfig},
		{"gzip", `{"level":0}`, `{"level":6}`, nil, nil, "", nil},
		{"gzip", `{"level":9}`, `{"level":6}`, nil, nil, "", nil},
		{"zstd", `{"level":100,"checksum":true}`, `{"level":3,"checksum":true}`, nil, nil, "level 100 is not in -131072..22", codecs.ErrInvalidConfig},
		{"zstd", `{"level":23,"checksum":true}`, `{"level":3,"checksum":true}`, nil, nil, "level 23 is not in", codecs.ErrInvalidConfig},
		{"zstd", `{"level":-131073,"checksum":true}`, `{"level":3,"checksum":true}`, nil, nil, "level -131073 is not in", codecs.ErrInvalidConfig},
		{"zstd", `{"level":22,"checksum":true}`, `{"level":3,"checksum":true}`, nil, nil, "", nil},
		{"zstd", `{"level":-131072,"checksum":true}`, `{"level":3,"checksum":true}`, nil, nil, "", nil},
		{"blosc", `{"cname":"zstd","clevel":10,"shuffle":"bitshuffle"}`, `{"cname":"zstd","clevel":5,"shuffle":"bitshuffle"}`, nil, nil, "clevel 10 is not in 0..9", codecs.ErrInvalidConfig},
		{"blosc", `{"cname":"lz4","clevel":-1,"shuffle":"shuffle"}`, `{"cname":"lz4","clevel":5,"shuffle":"shuffle"}`, nil, nil, "clevel -1 is not in 0..9", codecs.ErrInvalidConfig},
		{"blosc", `{"cname":"lz4","clevel":9,"shuffle":"shuffle"}`, `{"cname":"lz4","clevel":5,"shuffle":"shuffle"}`, nil, nil, "", nil},
		{"numcodecs.zlib", `{"level":10}`, `{"level":1}`, nil, nil, "level 10 is not in -1..9", codecs.ErrInvalidConfig},
		{"numcodecs.zlib", `{"level":-2}`, `{"level":1}`, nil, nil, "level -2 is not in -1..9", codecs.ErrInvalidConfig},
		{"numcodecs.zlib", `{"level":-1}`, `{"level":1}`, nil, nil, "", nil},
		{"numcodecs.gzip", `{"level":-1}`, `{"level":1}`, nil, nil, "level -1 is not in 0..9", codecs.ErrInvalidConfig},
		{"numcodecs.gzip", `{"level":10}`, `{"level":1}`, nil, nil, "level 10 is not in 0..9", codecs.ErrInvalidConfig},
		{"numcodecs.bz2", `{"level":0}`, "", bz2, bz2Raw, "bzip2 encoding", numcodecs.ErrUnsupported},
		{"numcodecs.bz2", `{"level":10}`, "", bz2, bz2Raw, "bzip2 encoding", numcodecs.ErrUnsupported},
	}
	for _, tc := range tests {
		t.Run(tc.name+tc.cfg, func(t *testing.T) {
			enc, dec := tc.enc, tc.dec
			if tc.good != "" {
				good := newB2B(t, codecs.Spec{Name: tc.name, Configuration: json.RawMessage(tc.good)})
				var err error
				if enc, err = good.Encode(nil, data); err != nil {
					t.Fatal(err)
				}
				dec = data
			}
			spec := codecs.Spec{Name: tc.name, Configuration: json.RawMessage(tc.cfg)}
			b := newB2B(t, spec)
			if out, err := b.Decode(nil, enc, len(dec)); err != nil || !bytes.Equal(out, dec) {
				t.Fatalf("decode: %v", err)
			}
			if s, err := codecs.SpecOf(b); err != nil || !bytes.Contains(s.Configuration, levelOf(t, tc.cfg)) {
				t.Errorf("metadata %s does not keep %s (%v)", s.Configuration, levelOf(t, tc.cfg), err)
			}
			chain, err := codecs.NewChain([]codecs.Spec{{Name: "bytes"}, spec}, codecs.ChunkRepr{Shape: []int{len(dec)}, DType: dtype.TypeUint8, Fill: []byte{0}})
			if err != nil {
				t.Fatalf("NewChain: %v", err)
			}
			got := make([]byte, len(dec))
			if err := chain.Decode(got, enc); err != nil || !bytes.Equal(got, dec) {
				t.Fatalf("chain decode: %v", err)
			}
			out, encErr := b.Encode([]byte("xy"), data)
			_, chainErr := chain.Encode(nil, dec)
			errs := map[string]error{
				"CheckEncode":       b.(codecs.EncodeChecker).CheckEncode(),
				"Chain.CheckEncode": chain.CheckEncode(),
				"Encode":            encErr,
				"Chain.Encode":      chainErr,
			}
			for what, err := range errs {
				switch {
				case tc.want == nil && err != nil:
					t.Errorf("%s: %v", what, err)
				case tc.want != nil && (!errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.key)):
					t.Errorf("%s: %v, want %v naming %q", what, err, tc.want, tc.key)
				}
			}
			if tc.want != nil && string(out) != "xy" {
				t.Errorf("failed Encode returned %q, want dst unchanged", out)
			}
			if tc.want == nil {
				if back, err := b.Decode(nil, out[2:], len(data)); err != nil || !bytes.Equal(back, data) {
					t.Errorf("round trip: %v", err)
				}
			}
		})
	}
}

func newB2B(t *testing.T, s codecs.Spec) codecs.BytesToBytes {
	t.Helper()
	c, err := codecs.New(s)
	if err != nil {
		t.Fatalf("New(%s %s): %v", s.Name, s.Configuration, err)
	}
	return c.(codecs.BytesToBytes)
}

// levelOf returns the `"level":n` or `"clevel":n` text of a configuration.
func levelOf(t *testing.T, cfg string) []byte {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(cfg), &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"level", "clevel"} {
		if v, ok := m[k]; ok {
			return []byte(`"` + k + `":` + string(v))
		}
	}
	t.Fatalf("%s has no level", cfg)
	return nil
}

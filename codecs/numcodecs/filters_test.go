package numcodecs_test

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/codecs/numcodecs"
	"github.com/gozarr/gozarr/internal/npy"
	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/fs"
	"github.com/gozarr/gozarr/store/mem"
	"github.com/gozarr/gozarr/zarr"
)

// filterDir holds v2 arrays written through numcodecs' filters and
// compressors by zarr-python 3.4.1 (testdata/filters/make_filters.py).
const filterDir = "../../testdata/filters"

// TestFilterFixtures reads every fixture and compares it with what
// zarr-python read; then writes the values back through gozarr with the
// same metadata and, where no compressor intervenes (whose output depends
// on the library), compares every stored chunk with numcodecs' bytes.
func TestFilterFixtures(t *testing.T) {
	ctx := context.Background()
	src, err := fs.New(filterDir, fs.ReadOnly())
	if err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(filterDir)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range ents {
		name, ok := strings.CutSuffix(e.Name(), ".zarr")
		if !ok {
			continue
		}
		n++
		t.Run(name, func(t *testing.T) {
			a, err := zarr.OpenArray(ctx, src, e.Name())
			if err != nil {
				t.Fatal(err)
			}
			got, shape, err := a.ReadBytes(ctx)
			if err != nil {
				t.Fatal(err)
			}
			want, err := npy.ReadFile(filepath.Join(filterDir, name+".npy"))
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(shape, want.Shape) || !bytes.Equal(got, want.Data) {
				t.Fatalf("read %v %x\nwant %v %x", shape, got, want.Shape, want.Data)
			}
			st := mem.New()
			var b *zarr.Array
			compressed := false
			if a.ZarrFormat() == 3 {
				b, err = zarr.CreateArray(ctx, st, "x", a.Metadata())
				compressed = strings.Contains(name, "lzma")
			} else {
				za, _ := os.ReadFile(filepath.Join(filterDir, e.Name(), ".zarray"))
				m, err := zarr.ParseArrayMetadataV2(za, nil)
				if err != nil {
					t.Fatal(err)
				}
				b, err = zarr.CreateArrayV2(ctx, st, "x", m)
				compressed = m.Compressor != nil
				for _, f := range m.Filters { // compressors as filters
					compressed = compressed || slices.Contains([]string{"zstd", "blosc", "zlib", "gzip", "lzma", "bz2", "lz4"}, f.ID)
				}
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := b.WriteBytes(ctx, got); err != nil {
				t.Fatal(err)
			}
			back, _, err := b.ReadBytes(ctx)
			if err != nil || !bytes.Equal(back, got) {
				t.Fatalf("gozarr's write reads back %x, %v", back, err)
			}
			if compressed {
				return
			}
			dir := ""
			if a.ZarrFormat() == 3 {
				dir = "c/"
			}
			chunks, _ := os.ReadDir(filepath.Join(filterDir, e.Name(), dir))
			for _, c := range chunks {
				if strings.HasPrefix(c.Name(), ".") || c.Name() == "zarr.json" {
					continue
				}
				ref, _ := os.ReadFile(filepath.Join(filterDir, e.Name(), dir, c.Name()))
				mine, err := st.Get(ctx, "x/"+dir+c.Name(), store.OffsetLen(0, 1<<30))
				if err != nil || !bytes.Equal(mine, ref) {
					t.Errorf("chunk %s: %x, %v\nnumcodecs: %x", c.Name(), mine, err, ref)
				}
			}
		})
	}
	if n < 20 {
		t.Fatalf("only %d fixtures", n)
	}
}

// TestChecksumVectors checks fletcher32 and jenkins_lookup3 against the
// checksums numcodecs computed (testdata/filters/vectors.json).
func TestChecksumVectors(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(filterDir, "vectors.json"))
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Vectors []struct {
			Len                 int     `json:"len"`
			Fletcher32          *uint32 `json:"fletcher32"`
			JenkinsLookup3      uint32  `json:"jenkins_lookup3"`
			JenkinsLookup3Seed7 uint32  `json:"jenkins_lookup3_seed7"`
		} `json:"vectors"`
	}
	if err := json.Unmarshal(b, &v); err != nil || len(v.Vectors) < 10 {
		t.Fatal(err)
	}
	for _, c := range v.Vectors {
		data := make([]byte, c.Len)
		for i := range data {
			data[i] = byte((i*131 + 7) % 256)
		}
		if c.Fletcher32 != nil {
			if got := numcodecs.Fletcher32(data); got != *c.Fletcher32 {
				t.Errorf("fletcher32 of %d bytes = %d, want %d", c.Len, got, *c.Fletcher32)
			}
		}
		if got := numcodecs.JenkinsLookup3(data, 0); got != c.JenkinsLookup3 {
			t.Errorf("jenkins_lookup3 of %d bytes = %d, want %d", c.Len, got, c.JenkinsLookup3)
		}
		if got := numcodecs.JenkinsLookup3(data, 7); got != c.JenkinsLookup3Seed7 {
			t.Errorf("jenkins_lookup3 seed 7 of %d bytes = %d, want %d", c.Len, got, c.JenkinsLookup3Seed7)
		}
	}
}

// TestNewFilterErrors checks configurations and inputs the new filters
// refuse.
func TestNewFilterErrors(t *testing.T) {
	for _, c := range []struct{ name, cfg string }{
		{"numcodecs.fixedscaleoffset", `{"offset": 0, "scale": 0, "dtype": "<f8"}`},
		{"numcodecs.fixedscaleoffset", `{"offset": 0, "dtype": "<f8"}`},
		{"numcodecs.fixedscaleoffset", `{"offset": 0, "scale": 1, "dtype": "<c8"}`},
		{"numcodecs.quantize", `{"digits": 2, "dtype": "<i4"}`},
		{"numcodecs.astype", `{"encode_dtype": "<f4"}`},
		{"numcodecs.bitround", `{"keepbits": 53}`},
		{"numcodecs.bitround", `{}`},
		{"numcodecs.packbits", `{"x": 1}`},
		{"numcodecs.categorize", `{"labels": ["a"], "dtype": "|O", "astype": "<f4"}`}, // objects: object.go
		{"numcodecs.categorize", `{"labels": ["a"], "dtype": "<U1", "astype": "<f4"}`},
		{"numcodecs.jenkins_lookup3", `{"initval": -1}`},
		{"numcodecs.jenkins_lookup3", `{"prefix": [256]}`},
	} {
		if _, err := codecs.New(codecs.Spec{Name: c.name, Configuration: json.RawMessage(c.cfg)}); !errors.Is(err, codecs.ErrInvalidConfig) {
			t.Errorf("%s %s: %v, want ErrInvalidConfig", c.name, c.cfg, err)
		}
	}
	pb := b2b(t, "numcodecs.packbits", `{}`)
	for _, src := range [][]byte{{}, {8, 0}, {1}} {
		if _, err := pb.Decode(nil, src, 100); !errors.Is(err, codecs.ErrCorrupt) {
			t.Errorf("packbits %x: %v", src, err)
		}
	}
	if _, err := pb.Decode(nil, []byte{0, 1, 2}, 15); !errors.Is(err, codecs.ErrCorrupt) {
		t.Errorf("packbits over the limit: %v", err)
	}
	f := b2b(t, "numcodecs.fletcher32", `{}`)
	enc, _ := f.Encode(nil, []byte("hello"))
	enc[0] ^= 1
	if _, err := f.Decode(nil, enc, 100); !errors.Is(err, codecs.ErrChecksum) {
		t.Errorf("fletcher32 corruption: %v", err)
	}
	br := b2b(t, "numcodecs.bitround", `{"keepbits": 3}`)
	if _, err := br.Encode(nil, make([]byte, 8)); !errors.Is(err, codecs.ErrInvalidConfig) {
		t.Errorf("bitround without an element size: %v", err)
	}
}

// TestLZMADictionaryCut decodes streams Python's lzma wrote at preset 9,
// whose headers ask for a 64 MiB dictionary, for a 256-byte chunk: the
// decoder cuts the dictionary to the chunk and allocates well under 1 MiB
// (it allocated 64 MiB per decode before).
func TestLZMADictionaryCut(t *testing.T) {
	want := bytes.Repeat([]byte("gozarr numcodecs lzma fuzz seed "), 8)
	for _, c := range []struct{ cfg, hex string }{
		{`{"format": 1}`, "fd377a585a0000016922de36020021011c00000010cf58cce000ff00265d00339bcbba91a1d0d5e522603fa8bd1755bdd9d4fd5fd5ce5299617094438370cbdf21497c0000000000372d4a8b00013e800200000019cacae63e300d8b020000000001595a"},
		{`{"format": 2}`, "5d00000004ffffffffffffffff00339bcbba91a1d0d5e522603fa8bd1755bdd9d4fd5fd5ce5299617094438370cbdf21720f33ffffecec8000"},
	} {
		src, _ := hex.DecodeString(c.hex)
		l := b2b(t, "numcodecs.lzma", c.cfg)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		got, err := l.Decode(nil, src, len(want))
		runtime.ReadMemStats(&after)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%s: %q, %v", c.cfg, got, err)
		}
		if n := after.TotalAlloc - before.TotalAlloc; n > 1<<20 {
			t.Errorf("%s: decoding 256 bytes allocated %d bytes", c.cfg, n)
		}
		if _, err := l.Decode(nil, src, len(want)-1); !errors.Is(err, codecs.ErrCorrupt) {
			t.Errorf("%s: one byte over the limit: %v", c.cfg, err)
		}
	}
}

// TestTruncatedAndDamagedStreams (issue 27): a truncated .xz stream is
// said to be truncated, not "not an .xz stream"; a bzip2 stream with a
// flipped bit or cut short is said to be damaged or truncated, not a bare
// "unexpected EOF". Both streams are Python's (lzma.compress, bz2.compress).
func TestTruncatedAndDamagedStreams(t *testing.T) {
	xzHex := "fd377a585a0000016922de36020021011c00000010cf58cce000ff00265d00339bcbba91a1d0d5e522603fa8bd1755bdd9d4fd5fd5ce5299617094438370cbdf21497c0000000000372d4a8b00013e800200000019cacae63e300d8b020000000001595a"
	bz2Hex := "425a6839314159265359130e7f7e00003b9980400010003e839a10200050a600002aa4d36a0793528742868584091f06c76323c102c70286c48a1c8d0b16247e2ee48a70a120261cfefc"
	xzSrc, _ := hex.DecodeString(xzHex)
	bzSrc, _ := hex.DecodeString(bz2Hex)
	want := bytes.Repeat([]byte("gozarr numcodecs bz2 seed "), 8)
	bz := b2b(t, "numcodecs.bz2", `{"level": 9}`)
	if got, err := bz.Decode(nil, bzSrc, len(want)); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("bz2 of Python: %q, %v", got, err)
	}
	flipped := bytes.Clone(bzSrc)
	flipped[34] ^= 1 // the decoder then runs out of input: was a bare "unexpected EOF"
	xz := b2b(t, "numcodecs.lzma", `{"format": 1}`)
	for _, c := range []struct {
		name string
		dec  codecs.BytesToBytes
		src  []byte
		want string
	}{
		{"xz cut short", xz, xzSrc[:len(xzSrc)-9], "truncated stream"},
		{"xz headers only", xz, xzSrc[:14], "truncated stream"},
		{"not xz", xz, bzSrc, "not an .xz stream"},
		{"bz2 cut short", bz, bzSrc[:len(bzSrc)-12], "truncated or damaged"},
		{"bz2 bit flipped", bz, flipped, "truncated or damaged"},
	} {
		_, err := c.dec.Decode(nil, c.src, 1<<10)
		if !errors.Is(err, codecs.ErrCorrupt) && !errors.Is(err, codecs.ErrChecksum) || !strings.Contains(err.Error(), c.want) || strings.HasSuffix(err.Error(), ": unexpected EOF") {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

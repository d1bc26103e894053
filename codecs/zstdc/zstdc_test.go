package zstdc_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	kzstd "github.com/klauspost/compress/zstd"

	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/codecs/blosc"
	"github.com/gozarr/gozarr/codecs/blosc/blosctest"
	"github.com/gozarr/gozarr/codecs/zstdc"
	"github.com/gozarr/gozarr/internal/refdata"
	"github.com/gozarr/gozarr/sharding"
	"github.com/gozarr/gozarr/store/fs"
	"github.com/gozarr/gozarr/zarr"
)

// sameElements reports whether got and want hold the same elements of
// item bytes, NaNs of any payload equal to each other (as the corpus
// tests compare).
func sameElements(got, want []byte, item int, float bool) bool {
	if bytes.Equal(got, want) {
		return true
	}
	if len(got) != len(want) || !float {
		return false
	}
	for i := 0; i+item <= len(got); i += item {
		g, w := got[i:i+item], want[i:i+item]
		if bytes.Equal(g, w) {
			continue
		}
		switch item {
		case 4:
			if !math.IsNaN(float64(math.Float32frombits(binary.LittleEndian.Uint32(g)))) ||
				!math.IsNaN(float64(math.Float32frombits(binary.LittleEndian.Uint32(w)))) {
				return false
			}
		case 8:
			if !math.IsNaN(math.Float64frombits(binary.LittleEndian.Uint64(g))) ||
				!math.IsNaN(math.Float64frombits(binary.LittleEndian.Uint64(w))) {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// TestCorpus reads every reference array whose codecs use zstd (zstd
// chunks, sharded inner chunks, Blosc with zstd, v2 compressors) through
// libzstd and compares with zarr-python's values.
func TestCorpus(t *testing.T) {
	ctx := context.Background()
	st, err := fs.New(refdata.Dir(), fs.ReadOnly())
	if err != nil {
		t.Fatal(err)
	}
	if c, err := codecs.New(codecs.Spec{Name: "zstd"}); err != nil {
		t.Fatal(err)
	} else if _, ok := c.(*zstdc.Zstd); !ok {
		t.Fatalf("the registered zstd codec is a %T", c)
	}
	n := 0
	for _, c := range refdata.Cases(t) {
		if !bytes.Contains(c.Codecs, []byte("zstd")) {
			continue
		}
		n++
		t.Run(c.Name, func(t *testing.T) {
			a, err := zarr.OpenArray(ctx, st, strings.TrimSuffix(c.Path, "/"))
			if err != nil {
				t.Fatal(err)
			}
			_, shardedInside := a.Chain().ArrayToBytes().(*sharding.Codec)
			shardedInside = shardedInside && a.Sharding() == nil // resolved per read, not here
			if !usesLibzstd(a.Chain()) && !bytes.Contains(c.Codecs, []byte("blosc")) && !shardedInside {
				t.Fatalf("codecs %s: no zstd codec of this package in the chain", c.Codecs)
			}
			dt := a.Metadata().DataType
			if dt.Size() == 0 {
				vals, _, err := zarr.ReadStrings(ctx, a)
				if err != nil {
					t.Fatal(err)
				}
				if len(vals) == 0 {
					t.Fatal("no strings")
				}
				return
			}
			got, _, err := a.ReadBytes(ctx)
			if err != nil {
				t.Fatal(err)
			}
			want := c.ExpectedArray(t)
			kind := dt.String()
			if !sameElements(got, want.Data, dt.Size(), strings.HasPrefix(kind, "float") || strings.HasPrefix(kind, "complex")) {
				t.Fatalf("values differ from zarr-python's")
			}
		})
	}
	if n < 10 {
		t.Fatalf("only %d zstd cases in the corpus", n)
	}
	t.Logf("%d zstd and Blosc-zstd reference arrays read through libzstd", n)
}

// usesLibzstd reports whether chain (or a sharded inner chain) holds this
// package's codec.
func usesLibzstd(chain *codecs.Chain) bool {
	for _, c := range chain.Codecs() {
		if _, ok := c.(*zstdc.Zstd); ok {
			return true
		}
	}
	l, _ := sharding.LayoutOf(chain)
	for ; l != nil; l = l.Nested() {
		if usesLibzstd(l.Inner()) {
			return true
		}
	}
	return false
}

// TestBloscFixtures decodes every zstd frame of the c-blosc 1.21 fixtures
// with libzstd doing Blosc's zstd streams.
func TestBloscFixtures(t *testing.T) {
	dir := filepath.Join("..", "blosc", "testdata", "cblosc")
	man, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Frames []struct {
			Cname                                         string
			Clevel, Shuffle, Typesize, Blocksize, Kind, N int
			Seed                                          uint64
			Offset, Length                                int
		}
	}
	if err := json.Unmarshal(man, &m); err != nil {
		t.Fatal(err)
	}
	all, err := os.ReadFile(filepath.Join(dir, "frames.bin"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range m.Frames {
		if f.Cname != "zstd" {
			continue
		}
		n++
		frame := all[f.Offset : f.Offset+f.Length]
		got, err := blosc.Decompress(make([]byte, 0, f.N), frame, f.N)
		if err != nil {
			t.Fatalf("zstd/c%d/shuffle%d/ts%d/n%d: %v", f.Clevel, f.Shuffle, f.Typesize, f.N, err)
		}
		if !bytes.Equal(got, blosctest.Data(blosctest.Kind(f.Kind), f.N, f.Typesize, f.Seed)) {
			t.Fatalf("zstd/c%d/shuffle%d/ts%d/n%d: decoded bytes differ", f.Clevel, f.Shuffle, f.Typesize, f.N)
		}
	}
	if n < 100 {
		t.Fatalf("only %d zstd fixtures", n)
	}
	// A corrupt stream is ErrCorrupt, through libzstd too.
	src := blosctest.Data(blosctest.Kind(1), 1<<16, 4, 1)
	enc, err := blosc.Compress(nil, src, blosc.Options{Cname: blosc.Zstd, Clevel: 5, Shuffle: blosc.ByteShuffle, Typesize: 4})
	if err != nil {
		t.Fatal(err)
	}
	bad := bytes.Clone(enc)
	for i := 32; i < len(bad); i += 7 {
		bad[i] ^= 0x5a
	}
	if _, err := blosc.Decompress(nil, bad, len(src)); !errors.Is(err, blosc.ErrCorrupt) {
		t.Errorf("corrupt zstd stream: %v, want ErrCorrupt", err)
	}
}

// frames returns test inputs: float32 fields of a few sizes.
func frames() map[string][]byte {
	out := map[string][]byte{}
	for _, n := range []int{0, 1, 1000, 64 << 10, 1 << 20} {
		b := make([]byte, n)
		x := uint32(1)
		for i := 0; i+4 <= n; i += 4 {
			x ^= x << 13
			x ^= x >> 17
			x ^= x << 5
			v := float32(math.Round(100*math.Sin(float64(i)/4000)*64)/64) + float32(x%16)/64
			binary.LittleEndian.PutUint32(b[i:], math.Float32bits(v))
		}
		out[fmt.Sprint(n)] = b
	}
	return out
}

// TestDifferential: libzstd's frames decode with the pure-Go codec and
// the other way round, to the same bytes, into the caller's buffer.
func TestDifferential(t *testing.T) {
	pure, _ := codecs.NewZstd(3, false)
	pureSum, _ := codecs.NewZstd(3, true)
	for name, src := range frames() {
		for _, level := range []int{-5, 0, 1, 3, 9, 19} {
			c, err := zstdc.New(level, false)
			if err != nil {
				t.Fatal(err)
			}
			enc, err := c.Encode(nil, src)
			if err != nil {
				t.Fatalf("%s level %d: %v", name, level, err)
			}
			got, err := pure.Decode(nil, enc, len(src))
			if err != nil || !bytes.Equal(got, src) {
				t.Fatalf("%s level %d: pure Go decode of libzstd's frame: %v", name, level, err)
			}
			for _, p := range []*codecs.Zstd{pure, pureSum} {
				penc, err := p.Encode(nil, src)
				if err != nil {
					t.Fatal(err)
				}
				// Into a buffer with room: decoded in place.
				buf := make([]byte, 3, 3+len(src)+10)
				got, err := c.Decode(buf, penc, len(src))
				if err != nil || !bytes.Equal(got[3:], src) {
					t.Fatalf("%s level %d: libzstd decode of the pure-Go frame: %v", name, level, err)
				}
				if len(src) > 0 && &got[3] != &buf[:4][3] {
					t.Errorf("%s: decoded into a new buffer though the caller's had room", name)
				}
				// Into nothing: a new buffer.
				if got, err := c.Decode(nil, penc, len(src)); err != nil || !bytes.Equal(got, src) {
					t.Fatalf("%s: decode into nil: %v", name, err)
				}
			}
		}
		// Checksummed frames encode (pure Go) and verify.
		cs, _ := zstdc.New(3, true)
		enc, err := cs.Encode(nil, src)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := cs.Decode(nil, enc, len(src)); err != nil || !bytes.Equal(got, src) {
			t.Fatalf("%s: checksummed frame: %v", name, err)
		}
	}
	if _, err := zstdc.New(23, false); err != nil {
		t.Fatal(err)
	} else if c, _ := zstdc.New(23, false); c.CheckEncode() == nil {
		t.Error("level 23: no error from CheckEncode")
	}
}

// TestLimits: the same bomb limits and errors as the pure-Go codec.
func TestLimits(t *testing.T) {
	c, _ := zstdc.New(3, false)
	src := frames()["1048576"]
	enc, err := c.Encode(nil, src)
	if err != nil {
		t.Fatal(err)
	}
	// Declares more than the limit: refused before decoding.
	if _, err := c.Decode(nil, enc, len(src)-1); !errors.Is(err, codecs.ErrCorrupt) {
		t.Errorf("frame over the limit: %v, want ErrCorrupt", err)
	}
	// No declared size (a streamed frame), more than the limit.
	var w bytes.Buffer
	zw, _ := kzstd.NewWriter(&w, kzstd.WithEncoderConcurrency(1))
	zw.Write(src)
	zw.Close()
	if h := (kzstd.Header{}); h.Decode(w.Bytes()) == nil && h.HasFCS {
		t.Fatal("the streamed frame declares its size")
	}
	if _, err := c.Decode(nil, w.Bytes(), len(src)/2); !errors.Is(err, codecs.ErrCorrupt) {
		t.Errorf("undeclared frame over the limit: %v, want ErrCorrupt", err)
	}
	if got, err := c.Decode(nil, w.Bytes(), len(src)); err != nil || !bytes.Equal(got, src) {
		t.Errorf("undeclared frame within the limit: %v", err)
	}
	// Two frames, the first declaring its own size only.
	two := append(bytes.Clone(enc), enc...)
	if got, err := c.Decode(nil, two, 2*len(src)); err != nil || !bytes.Equal(got, append(bytes.Clone(src), src...)) {
		t.Errorf("two frames: %v", err)
	}
	if _, err := c.Decode(nil, two, 2*len(src)-1); !errors.Is(err, codecs.ErrCorrupt) {
		t.Errorf("two frames over the limit: %v, want ErrCorrupt", err)
	}
	// Truncated and corrupt frames.
	for _, bad := range [][]byte{nil, enc[:3], enc[:len(enc)/2], append(bytes.Clone(enc[:20]), bytes.Repeat([]byte{0xff}, 64)...)} {
		if _, err := c.Decode(nil, bad, len(src)); !errors.Is(err, codecs.ErrCorrupt) {
			t.Errorf("bad frame of %d bytes: %v, want ErrCorrupt", len(bad), err)
		}
	}
	// A content checksum that does not match.
	pureSum, _ := codecs.NewZstd(3, true)
	sum, _ := pureSum.Encode(nil, src)
	sum[len(sum)-1] ^= 1
	if _, err := c.Decode(nil, sum, len(src)); !errors.Is(err, codecs.ErrChecksum) {
		t.Errorf("checksum mismatch: %v, want ErrChecksum", err)
	}
}

// TestFixtures reads every Zarr array among the repository's other test
// fixtures whose metadata names zstd (a zstd codec or compressor, Blosc
// with zstd, sharded inner chunks: vlen strings and bytes, rectilinear
// grids, consolidated groups, extension data types, filters, codec
// compatibility cases, …) with libzstd and with the pure-Go codec and
// compares the values: their own packages check them against the
// reference implementations, so the libzstd codec must give the same.
// The corpus of reference arrays (testdata/refdata) is TestCorpus's.
func TestFixtures(t *testing.T) {
	ctx := context.Background()
	root := filepath.Join("..", "..")
	var dirs []string
	for _, top := range []string{filepath.Join(root, "testdata"), filepath.Join(root, "codecs", "testdata")} {
		err := filepath.WalkDir(top, func(path string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && path == filepath.Join(root, "testdata", "refdata") {
				return filepath.SkipDir
			}
			if d.IsDir() || d.Name() != "zarr.json" && d.Name() != ".zarray" {
				return nil
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			var node struct {
				NodeType string `json:"node_type"`
			}
			if json.Unmarshal(b, &node) == nil && node.NodeType == "group" {
				return nil
			}
			if bytes.Contains(b, []byte("zstd")) {
				dirs = append(dirs, filepath.Dir(path))
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	libFactory, _ := codecs.Lookup("zstd")
	pureFactory := func(cfg json.RawMessage) (codecs.Codec, error) {
		c, err := libFactory(cfg)
		if err != nil {
			return nil, err
		}
		return c.(*zstdc.Zstd).Zstd, nil
	}
	// read returns all of the array's values, in the form its data type
	// reads in.
	read := func(a *zarr.Array) (any, error) {
		b, _, err := a.ReadBytes(ctx)
		if err == nil {
			return b, nil
		}
		if s, _, err := zarr.ReadStrings(ctx, a); err == nil {
			return s, nil
		}
		if b, _, err := zarr.ReadByteStrings(ctx, a); err == nil {
			return b, nil
		}
		if o, _, err := zarr.ReadObjects(ctx, a); err == nil {
			return o, nil
		}
		return nil, err
	}
	n := 0
	for _, dir := range dirs {
		name, _ := filepath.Rel(root, dir)
		st, err := fs.New(dir, fs.ReadOnly())
		if err != nil {
			t.Fatal(err)
		}
		lib, err := zarr.OpenArray(ctx, st, "")
		if err != nil {
			t.Logf("%s: not opened (%v)", name, err) // a fixture of errors
			continue
		}
		codecs.Replace("zstd", pureFactory)
		pure, err := zarr.OpenArray(ctx, st, "")
		codecs.Replace("zstd", libFactory)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want, werr := read(pure)
		got, gerr := read(lib)
		if werr != nil {
			if gerr == nil || errors.Is(gerr, codecs.ErrCorrupt) != errors.Is(werr, codecs.ErrCorrupt) {
				t.Errorf("%s: the pure-Go codec refuses it (%v), libzstd: %v", name, werr, gerr)
			}
			t.Logf("%s: refused alike (%v)", name, werr) // unreadable on purpose
			n++
			continue
		}
		if gerr != nil {
			t.Errorf("%s: %v", name, gerr)
			continue
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: values differ from the pure-Go codec's", name)
		}
		t.Logf("%s: same values", name)
		n++
	}
	if n < 20 {
		t.Fatalf("only %d fixture arrays with zstd read", n)
	}
	t.Logf("%d fixture arrays with zstd read alike through libzstd and pure Go", n)
}

// TestOverLimitIsLimitError (issue 27): a frame declaring more than the
// limit, and frames whose output runs past it, are *codecs.LimitError
// (with ErrCorrupt, as the pure-Go zstd codec reports them) saying
// "limit".
func TestOverLimitIsLimitError(t *testing.T) {
	z, err := zstdc.New(3, false)
	if err != nil {
		t.Fatal(err)
	}
	src := bytes.Repeat([]byte("gozarr limit "), 400)
	one, err := z.Encode(nil, src)
	if err != nil {
		t.Fatal(err)
	}
	two := append(append([]byte(nil), one...), one...)
	for name, tc := range map[string]struct {
		enc   []byte
		limit int
	}{"declared": {one, len(src) - 1}, "second frame": {two, len(src) + 100}} {
		_, err := z.Decode(nil, tc.enc, tc.limit)
		var le *codecs.LimitError
		if !errors.As(err, &le) || le.Limit != tc.limit || !errors.Is(err, codecs.ErrCorrupt) || !strings.Contains(err.Error(), "limit") {
			t.Errorf("%s: %v; want a LimitError of %d", name, err, tc.limit)
		}
	}
	if out, err := z.Decode(nil, two, 2*len(src)); err != nil || len(out) != 2*len(src) {
		t.Errorf("with room: %d bytes, %v", len(out), err)
	}
}

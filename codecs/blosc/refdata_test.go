package blosc

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

const refdataDir = "../../testdata/refdata"

// npyArray is a minimally parsed .npy file (format 1.x/2.x, C order).
type npyArray struct {
	shape    []int
	itemsize int
	data     []byte
}

func readNpy(t *testing.T, path string) npyArray {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) < 10 || string(b[:6]) != "\x93NUMPY" {
		t.Fatalf("%s: not a .npy file", path)
	}
	var hlen, off int
	if b[6] == 1 {
		hlen, off = int(binary.LittleEndian.Uint16(b[8:])), 10
	} else {
		hlen, off = int(binary.LittleEndian.Uint32(b[8:])), 12
	}
	header := string(b[off : off+hlen])
	if strings.Contains(header, "'fortran_order': True") {
		t.Fatalf("%s: Fortran order", path)
	}
	descr := regexp.MustCompile(`'descr': '([<>|])([a-zA-Z])(\d+)'`).FindStringSubmatch(header)
	if descr == nil {
		t.Fatalf("%s: no simple descr in %q", path, header)
	}
	item, _ := strconv.Atoi(descr[3])
	if descr[2] == "U" {
		item *= 4
	}
	shp := regexp.MustCompile(`'shape': \(([^)]*)\)`).FindStringSubmatch(header)
	var shape []int
	for _, f := range strings.Split(shp[1], ",") {
		if f = strings.TrimSpace(f); f != "" {
			v, _ := strconv.Atoi(f)
			shape = append(shape, v)
		}
	}
	return npyArray{shape: shape, itemsize: item, data: b[off+hlen:]}
}

// compareChunk checks that decoded (a chunk of chunkShape elements, in C
// or F order) equals the region of want starting at origin, for the part
// of the chunk inside the array.
func compareChunk(t *testing.T, name string, want npyArray, decoded []byte, origin, chunkShape []int, fortran bool) {
	t.Helper()
	nd := len(chunkShape)
	n := 1
	for _, s := range chunkShape {
		n *= s
	}
	if len(decoded) != n*want.itemsize {
		t.Fatalf("%s: decoded %d bytes, chunk has %d", name, len(decoded), n*want.itemsize)
	}
	idx := make([]int, nd)
	mismatches := 0
	for e := range n {
		// multi-index of element e in C order
		r := e
		for d := nd - 1; d >= 0; d-- {
			idx[d] = r % chunkShape[d]
			r /= chunkShape[d]
		}
		inside := true
		g := 0
		for d := range nd {
			p := origin[d] + idx[d]
			if p >= want.shape[d] {
				inside = false
				break
			}
			g = g*want.shape[d] + p
		}
		if !inside {
			continue
		}
		l := e
		if fortran {
			l = 0
			for d := nd - 1; d >= 0; d-- {
				l = l*chunkShape[d] + idx[d]
			}
		}
		got := decoded[l*want.itemsize : (l+1)*want.itemsize]
		exp := want.data[g*want.itemsize : (g+1)*want.itemsize]
		if !bytes.Equal(got, exp) {
			if mismatches < 3 {
				t.Errorf("%s: element %v: got %x, want %x", name, idx, got, exp)
			}
			mismatches++
		}
	}
	if mismatches > 0 {
		t.Errorf("%s: %d elements differ", name, mismatches)
	}
}

type refCase struct {
	Name         string            `json:"name"`
	ZarrFormat   int               `json:"zarr_format"`
	Path         string            `json:"path"`
	Expected     string            `json:"expected"`
	Shape        []int             `json:"shape"`
	ChunkShape   []int             `json:"chunk_shape"`
	ShardShape   []int             `json:"shard_shape"`
	Codecs       json.RawMessage   `json:"codecs"`
	KeyEncoding  *keyEncoding      `json:"chunk_key_encoding"`
	DimSep       string            `json:"dimension_separator"`
	NumpyDType   string            `json:"numpy_dtype"`
	Extra        map[string]any    `json:"-"`
	Attributes   json.RawMessage   `json:"attributes"`
	Tags         []string          `json:"tags"`
	NestedShapes [][]int           `json:"nested_chunk_shapes"`
	Groups       map[string]string `json:"-"`
}

type keyEncoding struct {
	Name          string `json:"name"`
	Configuration struct {
		Separator string `json:"separator"`
	} `json:"configuration"`
}

type v3CodecSpec struct {
	Name          string          `json:"name"`
	Configuration json.RawMessage `json:"configuration"`
}

type v2Codecs struct {
	Filters    json.RawMessage `json:"filters"`
	Compressor *struct {
		ID string `json:"id"`
	} `json:"compressor"`
	Order string `json:"order"`
}

func loadManifest(t *testing.T) []refCase {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(refdataDir, "manifest.json"))
	if err != nil {
		t.Skipf("no reference corpus: %v", err)
	}
	var m struct {
		Cases []refCase `json:"cases"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m.Cases
}

// gridKeys lists the chunk grid indices of an array.
func gridIndices(shape, chunk []int) [][]int {
	out := [][]int{{}}
	for d := range shape {
		var next [][]int
		nc := (shape[d] + chunk[d] - 1) / chunk[d]
		for _, p := range out {
			for i := range nc {
				next = append(next, append(append([]int(nil), p...), i))
			}
		}
		out = next
	}
	return out
}

func joinIdx(idx []int, sep string) string {
	s := make([]string, len(idx))
	for i, v := range idx {
		s[i] = strconv.Itoa(v)
	}
	return strings.Join(s, sep)
}

func v3Key(c refCase, idx []int) string {
	sep := "/"
	if c.KeyEncoding != nil && c.KeyEncoding.Configuration.Separator != "" {
		sep = c.KeyEncoding.Configuration.Separator
	}
	if c.KeyEncoding != nil && c.KeyEncoding.Name == "v2" {
		if len(idx) == 0 {
			return "0"
		}
		return joinIdx(idx, sep)
	}
	if len(idx) == 0 {
		return "c"
	}
	return "c" + sep + joinIdx(idx, sep)
}

// TestRefdata decodes every Blosc chunk of the zarr-python reference corpus
// (v3 arrays, blosc inner chunks of v3 shards, v2 arrays) and compares it
// with the expected .npy contents.
func TestRefdata(t *testing.T) {
	cases := loadManifest(t)
	tested := 0
	for _, c := range cases {
		if strings.HasPrefix(c.NumpyDType, ">") {
			continue
		}
		switch c.ZarrFormat {
		case 3:
			var specs []v3CodecSpec
			if json.Unmarshal(c.Codecs, &specs) != nil {
				continue
			}
			if len(specs) == 2 && specs[0].Name == "bytes" && specs[1].Name == "blosc" {
				tested++
				t.Run(c.Name, func(t *testing.T) { testV3(t, c, specs[1].Configuration) })
			}
			if len(specs) == 1 && specs[0].Name == "sharding_indexed" {
				var sc struct {
					Codecs        []v3CodecSpec `json:"codecs"`
					IndexCodecs   []v3CodecSpec `json:"index_codecs"`
					IndexLocation string        `json:"index_location"`
				}
				if json.Unmarshal(specs[0].Configuration, &sc) != nil || len(sc.Codecs) != 2 || sc.Codecs[1].Name != "blosc" ||
					sc.Codecs[0].Name != "bytes" || len(c.NestedShapes) > 0 {
					continue
				}
				tested++
				t.Run(c.Name, func(t *testing.T) { testShard(t, c, sc.IndexLocation, len(sc.IndexCodecs)) })
			}
		case 2:
			var v2 v2Codecs
			if json.Unmarshal(c.Codecs, &v2) != nil || v2.Compressor == nil || v2.Compressor.ID != "blosc" ||
				(len(v2.Filters) > 0 && string(v2.Filters) != "null") {
				continue
			}
			tested++
			t.Run(c.Name, func(t *testing.T) { testV2(t, c, v2.Order == "F") })
		}
	}
	if tested < 20 {
		t.Errorf("only %d blosc cases found in the corpus", tested)
	}
}

func testV3(t *testing.T, c refCase, cfg json.RawMessage) {
	if _, err := NewCodec(cfg); err != nil {
		t.Fatalf("config %s: %v", cfg, err)
	}
	want := readNpy(t, filepath.Join(refdataDir, c.Expected))
	found := 0
	for _, idx := range gridIndices(c.Shape, c.ChunkShape) {
		key := v3Key(c, idx)
		src, err := os.ReadFile(filepath.Join(refdataDir, c.Path, filepath.FromSlash(key)))
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		found++
		checkFrame(t, key, src, want, idx, c.ChunkShape, c.ChunkShape, false)
	}
	if found == 0 {
		t.Fatal("no chunks")
	}
}

func checkFrame(t *testing.T, key string, src []byte, want npyArray, idx, chunkShape, step []int, fortran bool) {
	t.Helper()
	n := want.itemsize
	for _, s := range chunkShape {
		n *= s
	}
	if nb, _, _, _, _, err := FrameInfo(src); err != nil || nb != n {
		t.Fatalf("%s: FrameInfo = %d, %v; want %d bytes", key, nb, err, n)
	}
	// Decode into a buffer with room, which must be used in place.
	buf := make([]byte, 3, 3+n)
	got, err := Decompress(buf, src, n)
	if err != nil {
		t.Fatalf("%s: %v", key, err)
	}
	if &got[0] != &buf[0] {
		t.Errorf("%s: Decompress did not use the caller's buffer", key)
	}
	origin := make([]int, len(idx))
	for d := range idx {
		origin[d] = idx[d] * step[d]
	}
	compareChunk(t, key, want, got[3:], origin, chunkShape, fortran)
	if n > 0 {
		if _, err := Decompress(nil, src, n-1); err == nil {
			t.Errorf("%s: decoded with a limit below its size", key)
		}
	}
}

func testShard(t *testing.T, c refCase, loc string, nIndexCodecs int) {
	want := readNpy(t, filepath.Join(refdataDir, c.Expected))
	inner := 1
	per := make([]int, len(c.ShardShape))
	for d := range per {
		per[d] = c.ShardShape[d] / c.ChunkShape[d]
		inner *= per[d]
	}
	found := 0
	for _, sidx := range gridIndices(c.Shape, c.ShardShape) {
		key := v3Key(c, sidx)
		shard, err := os.ReadFile(filepath.Join(refdataDir, c.Path, filepath.FromSlash(key)))
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		ilen := 16*inner + 4*(nIndexCodecs-1) // crc32c adds 4 bytes
		var index []byte
		if loc == "start" {
			index = shard[:ilen]
		} else {
			index = shard[len(shard)-ilen:]
		}
		for k, iidx := range gridIndices(c.ShardShape, c.ChunkShape) {
			off := binary.LittleEndian.Uint64(index[16*k:])
			nb := binary.LittleEndian.Uint64(index[16*k+8:])
			if off == ^uint64(0) && nb == ^uint64(0) {
				continue
			}
			gidx := make([]int, len(iidx))
			outside := false
			for d := range iidx {
				gidx[d] = sidx[d]*per[d] + iidx[d]
				if gidx[d]*c.ChunkShape[d] >= c.Shape[d] {
					outside = true
				}
			}
			if outside {
				continue
			}
			found++
			checkFrame(t, fmt.Sprintf("%s[%v]", key, iidx), shard[off:off+nb], want, gidx, c.ChunkShape, c.ChunkShape, false)
		}
	}
	if found == 0 {
		t.Fatal("no inner chunks")
	}
}

func testV2(t *testing.T, c refCase, fortran bool) {
	want := readNpy(t, filepath.Join(refdataDir, c.Expected))
	sep := c.DimSep
	if sep == "" {
		sep = "."
	}
	found := 0
	for _, idx := range gridIndices(c.Shape, c.ChunkShape) {
		key := joinIdx(idx, sep)
		if len(idx) == 0 {
			key = "0"
		}
		src, err := os.ReadFile(filepath.Join(refdataDir, c.Path, filepath.FromSlash(key)))
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		found++
		checkFrame(t, key, src, want, idx, c.ChunkShape, c.ChunkShape, fortran)
	}
	if found == 0 {
		t.Fatal("no chunks")
	}
}

// readChunk reads the v3 chunk at grid index idx.
func readChunk(c refCase, idx []int) ([]byte, error) {
	return os.ReadFile(filepath.Join(refdataDir, c.Path, filepath.FromSlash(v3Key(c, idx))))
}

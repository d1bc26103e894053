package blosc

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/gozarr/gozarr/internal/npy"
	"github.com/gozarr/gozarr/internal/refdata"
)

// itemSize is the element size of a corpus .npy array.
func itemSize(t *testing.T, a *npy.Array) int {
	t.Helper()
	n, err := npy.ItemSize(a.Descr)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// compareChunk checks that decoded (a chunk of chunkShape elements, in C
// or F order) equals the region of want starting at origin, for the part
// of the chunk inside the array.
func compareChunk(t *testing.T, name string, want *npy.Array, decoded []byte, origin, chunkShape []int, fortran bool) {
	t.Helper()
	itemsize := itemSize(t, want)
	nd := len(chunkShape)
	n := 1
	for _, s := range chunkShape {
		n *= s
	}
	if len(decoded) != n*itemsize {
		t.Fatalf("%s: decoded %d bytes, chunk has %d", name, len(decoded), n*itemsize)
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
			if p >= want.Shape[d] {
				inside = false
				break
			}
			g = g*want.Shape[d] + p
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
		got := decoded[l*itemsize : (l+1)*itemsize]
		exp := want.Data[g*itemsize : (g+1)*itemsize]
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

// TestRefdata decodes every Blosc chunk of the zarr-python reference corpus
// (v3 arrays, blosc inner chunks of v3 shards, v2 arrays) and compares it
// with the expected .npy contents.
func TestRefdata(t *testing.T) {
	cases := refdata.Cases(t)
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
					sc.Codecs[0].Name != "bytes" || len(c.NestedChunkShapes) > 0 {
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
			t.Run(c.Name, func(t *testing.T) { testChunks(t, c, v2.Order == "F") })
		}
	}
	if tested < 20 {
		t.Errorf("only %d blosc cases found in the corpus", tested)
	}
}

func testV3(t *testing.T, c refdata.Case, cfg json.RawMessage) {
	if _, err := NewCodec(cfg); err != nil {
		t.Fatalf("config %s: %v", cfg, err)
	}
	testChunks(t, c, false)
}

func checkFrame(t *testing.T, key string, src []byte, want *npy.Array, idx, chunkShape, step []int, fortran bool) {
	t.Helper()
	n := itemSize(t, want)
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

func testShard(t *testing.T, c refdata.Case, loc string, nIndexCodecs int) {
	want := c.ExpectedArray(t)
	inner := 1
	per := make([]int, len(c.ShardShape))
	for d := range per {
		per[d] = c.ShardShape[d] / c.ChunkShape[d]
		inner *= per[d]
	}
	found := 0
	for _, sidx := range refdata.GridIndices(c.Shape, c.ShardShape) {
		key := c.ChunkKey(sidx)
		shard, err := os.ReadFile(c.File(key))
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
		for k, iidx := range refdata.GridIndices(c.ShardShape, c.ChunkShape) {
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

// testChunks decodes every stored chunk of c (each a Blosc frame holding
// the chunk in C or, for fortran, F order) and compares it with the
// expected contents.
func testChunks(t *testing.T, c refdata.Case, fortran bool) {
	want := c.ExpectedArray(t)
	found := 0
	for _, idx := range refdata.GridIndices(c.Shape, c.ChunkShape) {
		key := c.ChunkKey(idx)
		src, err := os.ReadFile(c.File(key))
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

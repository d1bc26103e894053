package main

import (
	"encoding/binary"
	"fmt"
	"math"
	"runtime"
	"sync"

	"github.com/gozarr/gozarr/zarr"
)

// The generated field: a smooth function of the position plus uniform
// noise, quantised. value(i, j) is a pure function of (seed, n, i, j), so
// any reader can check elements without holding the whole array.
//
//	smooth = 100·sin(2π·3i/n)·cos(2π·2j/n) + 10·sin(2π·5(i+j)/n)
//	noise  = 0.5 · (u − 0.5), u uniform in [0, 1) from splitmix64(seed ^ (i·n+j))
//	value  = round(64 · (smooth + noise)) / 64, as float32
//
// Like an instrument's readings with a resolution of 1/64, the data
// compresses about 2× with zstd or gzip at level 1 and 2.2× with blosc
// lz4+shuffle: the codecs do real work (unquantised noise in every
// mantissa bit would leave zstd and gzip storing raw blocks).

// Noise amplitude and quantisation (values are multiples of 1/quantum).
var noiseAmp, quantum float64 = 0.5, 64

// splitmix64 is Steele, Lea and Flood's 64-bit mixer.
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// rowTerms and colTerms are the separable factors of the smooth part.
type terms struct{ a, s5, c5 float64 }

func rowTerms(i, n int) terms {
	x := 2 * math.Pi * float64(i) / float64(n)
	return terms{a: math.Sin(3 * x), s5: math.Sin(5 * x), c5: math.Cos(5 * x)}
}

func colTerms(j, n int) terms {
	y := 2 * math.Pi * float64(j) / float64(n)
	return terms{a: math.Cos(2 * y), s5: math.Sin(5 * y), c5: math.Cos(5 * y)}
}

// combine is the field at one element, given its row and column factors.
func combine(r, c terms, seed uint64, idx uint64) float32 {
	u := float64(splitmix64(seed^idx)>>11) / (1 << 53)
	// sin(a+b) = sin a cos b + cos a sin b.
	v := 100*r.a*c.a + 10*(r.s5*c.c5+r.c5*c.s5) + noiseAmp*(u-0.5)
	return float32(math.Round(v*quantum) / quantum)
}

// value returns element (i, j) of the n×n field.
func value(seed uint64, n, i, j int) float32 {
	return combine(rowTerms(i, n), colTerms(j, n), seed, uint64(i)*uint64(n)+uint64(j))
}

// generate fills a new n×n float32 array (little-endian bytes) with the
// field, on all cores.
func generate(seed uint64, n int) []byte {
	out := make([]byte, n*n*4)
	cols := make([]terms, n)
	for j := range cols {
		cols[j] = colTerms(j, n)
	}
	workers := runtime.GOMAXPROCS(0)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < n; i += workers {
				r := rowTerms(i, n)
				row := out[i*n*4 : (i+1)*n*4]
				base := uint64(i) * uint64(n)
				for j := range n {
					binary.LittleEndian.PutUint32(row[4*j:], math.Float32bits(combine(r, cols[j], seed, base+uint64(j))))
				}
			}
		})
	}
	wg.Wait()
	return out
}

// layout is one way of storing the array.
type layout struct {
	Name    string // e.g. "zstd-sharded"
	Codec   string // "none", "zstd", "gzip" or "blosc"
	Sharded bool
}

// allLayouts lists the layouts in report order.
func allLayouts() []layout {
	var ls []layout
	for _, c := range []string{"none", "zstd", "gzip", "blosc"} {
		ls = append(ls, layout{Name: c, Codec: c}, layout{Name: c + "-sharded", Codec: c, Sharded: true})
	}
	return ls
}

// compressorJSON returns the bytes-to-bytes codec of a layout, or "".
func compressorJSON(codec string) string {
	switch codec {
	case "zstd":
		return `{"name": "zstd", "configuration": {"level": 1, "checksum": false}}`
	case "gzip":
		return `{"name": "gzip", "configuration": {"level": 1}}`
	case "blosc":
		return `{"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5, "shuffle": "shuffle", "typesize": 4, "blocksize": 0}}`
	}
	return ""
}

const bytesCodecJSON = `{"name": "bytes", "configuration": {"endian": "little"}}`

// metadataJSON returns the zarr.json of layout l for geometry g.
func metadataJSON(l layout, g geometry) string {
	chain := bytesCodecJSON
	if c := compressorJSON(l.Codec); c != "" {
		chain += ", " + c
	}
	chunk := g.Chunk
	if l.Sharded {
		chunk = g.Shard
		chain = fmt.Sprintf(`{"name": "sharding_indexed", "configuration": {
      "chunk_shape": [%d, %d],
      "codecs": [%s],
      "index_codecs": [%s, {"name": "crc32c"}],
      "index_location": "end"}}`, g.Inner, g.Inner, chain, bytesCodecJSON)
	}
	return fmt.Sprintf(`{
  "zarr_format": 3, "node_type": "array",
  "shape": [%d, %d], "data_type": "float32",
  "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [%d, %d]}},
  "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
  "fill_value": 0.0,
  "codecs": [%s],
  "attributes": {"generator": "gozarr bench", "seed": %d}
}`, g.N, g.N, chunk, chunk, chain, g.Seed)
}

// metadata parses metadataJSON.
func metadata(l layout, g geometry) (*zarr.ArrayMetadata, error) {
	return zarr.ParseArrayMetadata([]byte(metadataJSON(l, g)))
}

// geometry is the array and chunking of one run.
type geometry struct {
	N     int    // the array is N×N float32
	Chunk int    // unsharded chunk edge
	Shard int    // shard edge
	Inner int    // inner chunk edge of sharded layouts
	Seed  uint64 // noise seed
}

// unit returns the edge of the smallest stored chunk of a layout: the chunk,
// or the inner chunk when sharded.
func (g geometry) unit(l layout) int {
	if l.Sharded {
		return g.Inner
	}
	return g.Chunk
}

// bytes returns the size of the whole array.
func (g geometry) bytes() int64 { return int64(g.N) * int64(g.N) * 4 }

package main

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"

	"github.com/gozarr/gozarr/zarr"
)

// field returns an n×n float32 array (little-endian bytes, C order): a
// smooth pattern of a few sines plus uniform noise, quantised to 1/64, so
// zstd does real work (about 2× on this data) without the data being
// trivially compressible. Row i's noise comes from its own PCG stream
// (seed, i), so the result does not depend on the number of workers.
func field(seed uint64, n int) []byte {
	out := make([]byte, n*n*4)
	colA := make([]float64, n)
	colB := make([]float64, n)
	for j := range n {
		y := 2 * math.Pi * float64(j) / float64(n)
		colA[j], colB[j] = math.Cos(2*y), y
	}
	workers := runtime.GOMAXPROCS(0)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < n; i += workers {
				x := 2 * math.Pi * float64(i) / float64(n)
				rowA := math.Sin(3 * x)
				rng := rand.New(rand.NewPCG(seed, uint64(i)))
				row := out[i*n*4 : (i+1)*n*4]
				for j := range n {
					v := 100*rowA*colA[j] + 10*math.Sin(5*(x+colB[j])) + 0.5*(rng.Float64()-0.5)
					binary.LittleEndian.PutUint32(row[4*j:], math.Float32bits(float32(math.Round(v*64)/64)))
				}
			}
		})
	}
	wg.Wait()
	return out
}

// arrayMetadata is the benchmark array: n×n float32, shards of shard×shard
// holding inner chunks of inner×inner encoded with bytes + zstd level 1, the
// index (bytes + crc32c) at the end of each shard.
func arrayMetadata(n, shard, inner int, seed uint64) (*zarr.ArrayMetadata, error) {
	doc := fmt.Sprintf(`{
  "zarr_format": 3, "node_type": "array",
  "shape": [%[1]d, %[1]d], "data_type": "float32",
  "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [%[2]d, %[2]d]}},
  "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
  "fill_value": 0.0,
  "codecs": [{"name": "sharding_indexed", "configuration": {
    "chunk_shape": [%[3]d, %[3]d],
    "codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
               {"name": "zstd", "configuration": {"level": 1, "checksum": false}}],
    "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}],
    "index_location": "end"}}],
  "attributes": {"generator": "gozarr bench/s3bench", "seed": %[4]d}
}`, n, shard, inner, seed)
	return zarr.ParseArrayMetadata([]byte(doc))
}

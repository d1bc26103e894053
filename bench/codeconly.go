package main

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/gozarr/gozarr/codecs/blosc"
)

// The codec-only baseline: the codec's own library decoding the same
// chunks on Threads goroutines with no Zarr logic at all. Every chunk file
// is read into memory first; for sharded layouts the inner chunks are cut
// out of the shards with the raw index (n × (offset, nbytes) uint64 LE at
// the end, then a 4-byte crc32c that is not checked). Each goroutine has
// its own decoder and its own scratch buffer of one chunk, reused for every
// chunk it decodes (the cheapest place a decoder can write to), with
// decoderSlack bytes of spare capacity: klauspost/compress's zstd decoder
// uses its fast, over-writing copies only when the output has a block's
// worth of room to spare, and about 1.7× slower exact copies otherwise, so
// the baseline is the codec at its best.

// decoderSlack is the spare capacity of the codec-only scratch buffers:
// zstd's largest block plus its 32-byte over-allocation, rounded up.
const decoderSlack = 128<<10 + 64

// loadChunks returns the encoded bytes of every stored chunk (inner chunk
// when sharded) of the array in dir.
func loadChunks(dir string, l layout, g geometry) ([][]byte, error) {
	var files []string
	err := filepath.WalkDir(filepath.Join(dir, "c"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, p)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	var chunks [][]byte
	perShard := (g.Shard / g.Inner) * (g.Shard / g.Inner)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		if !l.Sharded {
			chunks = append(chunks, b)
			continue
		}
		ixLen := perShard*16 + 4
		if len(b) < ixLen {
			return nil, fmt.Errorf("%s: shard shorter than its index", f)
		}
		ix := b[len(b)-ixLen:]
		for i := range perShard {
			off := binary.LittleEndian.Uint64(ix[16*i:])
			n := binary.LittleEndian.Uint64(ix[16*i+8:])
			if off == ^uint64(0) {
				continue // empty inner chunk
			}
			if off+n > uint64(len(b)) {
				return nil, fmt.Errorf("%s: inner chunk %d outside the shard", f, i)
			}
			chunks = append(chunks, b[off:off+n:off+n])
		}
	}
	return chunks, nil
}

// decodeFunc decodes one chunk into scratch (len(scratch) = chunk size).
type decodeFunc func(scratch, src []byte) error

// newDecoder returns a per-goroutine decoder for a codec.
func newDecoder(codec string) (decodeFunc, error) {
	switch codec {
	case "zstd":
		d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1))
		if err != nil {
			return nil, err
		}
		return func(scratch, src []byte) error {
			out, err := d.DecodeAll(src, scratch[:0])
			if err == nil && len(out) != len(scratch) {
				err = fmt.Errorf("zstd: %d bytes, want %d", len(out), len(scratch))
			}
			return err
		}, nil
	case "gzip":
		var (
			br bytes.Reader
			zr gzip.Reader
		)
		return func(scratch, src []byte) error {
			br.Reset(src)
			if err := zr.Reset(&br); err != nil {
				return err
			}
			_, err := io.ReadFull(&zr, scratch)
			return err
		}, nil
	case "blosc":
		return func(scratch, src []byte) error {
			_, err := blosc.Decompress(scratch[:0], src, len(scratch))
			return err
		}, nil
	}
	return nil, fmt.Errorf("no codec-only baseline for %q", codec)
}

// paddedCounter keeps the shared work counter off the workers' lines.
type paddedCounter struct {
	_ [64]byte
	n atomic.Int64
	_ [64]byte
}

// prepareCodec loads every chunk of a layout and prepares their
// codec-only decode on j.Threads goroutines.
func prepareCodec(j job) (workOp, error) {
	chunks, err := loadChunks(j.Dir, j.Layout, j.Geo)
	if err != nil {
		return workOp{}, err
	}
	unit := j.Geo.unit(j.Layout)
	chunkBytes := unit * unit * 4
	threads := max(j.Threads, 1)
	decs := make([]decodeFunc, threads)
	scratch := make([][]byte, threads)
	for t := range threads {
		if decs[t], err = newDecoder(j.Layout.Codec); err != nil {
			return workOp{}, err
		}
		scratch[t] = make([]byte, chunkBytes, chunkBytes+decoderSlack)
	}
	op := func() error {
		var next paddedCounter
		errs := make([]error, threads)
		var wg sync.WaitGroup
		for t := range threads {
			wg.Go(func() {
				dec, buf := decs[t], scratch[t]
				for {
					i := next.n.Add(1) - 1
					if i >= int64(len(chunks)) {
						return
					}
					if err := dec(buf, chunks[i]); err != nil {
						errs[t] = err
						return
					}
				}
			})
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				return err
			}
		}
		return nil
	}
	n := int64(len(chunks)) * int64(chunkBytes)
	return workOp{op: op, out: n, decoded: n}, nil
}

// childCodec measures the codec-only decode of every chunk of a layout.
func childCodec(j job) (result, error) {
	w, err := prepareCodec(j)
	if err != nil {
		return result{}, err
	}
	r, err := measure(j.Reps, w.op)
	r.OutBytes, r.DecodedBytes = w.out, w.decoded
	return r, err
}

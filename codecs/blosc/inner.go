package blosc

import (
	"bytes"
	"fmt"
	"io"
	"sync"

	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zlib"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// innerDecoder decodes one compressed stream into exactly len(dst) bytes.
type innerDecoder func(dst, src []byte) error

var innerDecoders = [...]innerDecoder{
	formatBloscLZ: decodeBloscLZ,
	formatLZ4:     decodeLZ4,
	formatSnappy:  decodeSnappy,
	formatZlib:    decodeZlib,
	formatZstd:    decodeZstd,
}

func streamErr(codec string, want, got int, err error) error {
	if err != nil {
		return fmt.Errorf("%w: %s stream: %v", ErrCorrupt, codec, err)
	}
	return fmt.Errorf("%w: %s stream decodes to %d bytes, want %d", ErrCorrupt, codec, got, want)
}

func decodeBloscLZ(dst, src []byte) error {
	n, ok := blosclzDecode(dst, src)
	if !ok || n != len(dst) {
		return streamErr("blosclz", len(dst), n, nil)
	}
	return nil
}

func decodeLZ4(dst, src []byte) error {
	n, err := lz4.UncompressBlock(src, dst)
	if err != nil || n != len(dst) {
		return streamErr("lz4", len(dst), n, err)
	}
	return nil
}

func decodeSnappy(dst, src []byte) error {
	n, err := snappy.DecodedLen(src)
	if err != nil || n != len(dst) {
		return streamErr("snappy", len(dst), n, err)
	}
	out, err := snappy.DecodeStrict(dst[:0:len(dst)], src)
	if err != nil || len(out) != len(dst) {
		return streamErr("snappy", len(dst), len(out), err)
	}
	return nil
}

// zlibReader is a pooled zlib reader with its source.
type zlibReader struct {
	br bytes.Reader
	zr io.ReadCloser
}

var zlibReaders sync.Pool

func decodeZlib(dst, src []byte) error {
	z, _ := zlibReaders.Get().(*zlibReader)
	if z == nil {
		z = new(zlibReader)
	}
	defer zlibReaders.Put(z)
	z.br.Reset(src)
	var err error
	if z.zr == nil {
		z.zr, err = zlib.NewReader(&z.br)
	} else {
		err = z.zr.(zlib.Resetter).Reset(&z.br, nil)
	}
	if err != nil {
		z.zr = nil
		return streamErr("zlib", len(dst), 0, err)
	}
	n, err := io.ReadFull(z.zr, dst)
	if err != nil {
		return streamErr("zlib", len(dst), n, err)
	}
	// The stream must end here (this also checks the Adler-32).
	var one [1]byte
	if m, err := z.zr.Read(one[:]); m != 0 || err != io.EOF {
		if err == nil || err == io.EOF {
			return streamErr("zlib", len(dst), n+m, nil)
		}
		return streamErr("zlib", len(dst), n, err)
	}
	return nil
}

var zstdDec = sync.OnceValue(func() *zstd.Decoder {
	d, err := zstd.NewReader(nil,
		zstd.WithDecoderConcurrency(0),
		zstd.WithDecodeAllCapLimit(true),
		zstd.WithDecoderMaxMemory(maxBlockSize))
	if err != nil {
		panic(err) // only on invalid options
	}
	return d
})

func decodeZstd(dst, src []byte) error {
	out, err := zstdDec().DecodeAll(src, dst[:0:len(dst)])
	if err != nil || len(out) != len(dst) {
		return streamErr("zstd", len(dst), len(out), err)
	}
	return nil
}

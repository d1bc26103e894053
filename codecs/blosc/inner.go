package blosc

import (
	"fmt"
	"sync"

	"github.com/gozarr/gozarr/internal/inflate"
	"github.com/klauspost/compress/snappy"
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

func decodeZlib(dst, src []byte) error {
	out, err := inflate.Zlib(dst[:0], src, len(dst))
	if err != nil || len(out) != len(dst) {
		return streamErr("zlib", len(dst), len(out), err)
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

// SetZstdBlockDecoder replaces the decoder of Blosc's zstd streams (by
// default klauspost/compress, pure Go) with decode, which must decode the
// zstd frame src into dst, never writing past len(dst), and return the
// bytes written: a stream that decodes to other than exactly len(dst)
// bytes is ErrCorrupt either way. Call it from an init function (the
// codecs/zstdc module does, for libzstd), before any decoding starts.
func SetZstdBlockDecoder(decode func(dst, src []byte) (int, error)) {
	innerDecoders[formatZstd] = func(dst, src []byte) error {
		n, err := decode(dst, src)
		if err != nil || n != len(dst) {
			return streamErr("zstd", len(dst), n, err)
		}
		return nil
	}
}

func decodeZstd(dst, src []byte) error {
	out, err := zstdDec().DecodeAll(src, dst[:0:len(dst)])
	if err != nil || len(out) != len(dst) {
		return streamErr("zstd", len(dst), len(out), err)
	}
	return nil
}

package blosc

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"runtime"
	"slices"
	"sync"

	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zlib"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// Shuffle selects the filter applied to each block before compression.
type Shuffle int

// The shuffle filters. Their values are those of c-blosc and of the integer
// "shuffle" of Zarr v2 Blosc metadata.
const (
	// NoShuffle compresses blocks as they are.
	NoShuffle Shuffle = 0
	// ByteShuffle groups byte j of every element together (for type sizes
	// above 1; with type size 1 it is recorded but changes nothing).
	ByteShuffle Shuffle = 1
	// BitShuffle groups bit b of byte j of every element together.
	BitShuffle Shuffle = 2
)

// String returns the Zarr v3 name of s: "noshuffle", "shuffle" or
// "bitshuffle".
func (s Shuffle) String() string {
	switch s {
	case NoShuffle:
		return "noshuffle"
	case ByteShuffle:
		return "shuffle"
	case BitShuffle:
		return "bitshuffle"
	}
	return fmt.Sprintf("Shuffle(%d)", int(s))
}

// Compressor names (Options.Cname and the Zarr "cname").
const (
	BloscLZ = "blosclz"
	LZ4     = "lz4"
	LZ4HC   = "lz4hc"
	Snappy  = "snappy"
	Zlib    = "zlib"
	Zstd    = "zstd"
)

// compressor codes, as c-blosc numbers them.
const (
	codeBloscLZ = iota
	codeLZ4
	codeLZ4HC
	codeSnappy
	codeZlib
	codeZstd
)

var cnames = [...]string{BloscLZ, LZ4, LZ4HC, Snappy, Zlib, Zstd}

// codeFormat maps a compressor code to the frame's format code.
var codeFormat = [...]byte{formatBloscLZ, formatLZ4, formatLZ4, formatSnappy, formatZlib, formatZstd}

func compCode(name string) (int, bool) {
	if name == "" {
		return codeZstd, true
	}
	i := slices.Index(cnames[:], name)
	return i, i >= 0
}

// Options are the parameters of Compress. The zero value means zstd at
// level 0, which stores the data uncompressed.
type Options struct {
	// Cname is the inner codec: "blosclz", "lz4", "lz4hc", "snappy",
	// "zlib" or "zstd" (the constants BloscLZ...Zstd); empty means "zstd".
	Cname string
	// Clevel is the compression level, 0 (store) to 9.
	Clevel int
	// Shuffle is the filter applied to each block (default NoShuffle).
	Shuffle Shuffle
	// Typesize is the element size the shuffle filters work with; values
	// below 1 mean 1 and values above 255 are treated as 1, as in c-blosc.
	Typesize int
	// Blocksize forces the block size (at least 128 bytes); 0 (default)
	// chooses it as c-blosc 1.21 does from Cname, Clevel and Typesize.
	Blocksize int
}

// Compress appends to dst the Blosc1 frame (format version 2) of src,
// compressed with opts, and returns the extended slice. The block size and
// the choice of split streams are those c-blosc 1.21 makes (its default
// "forward compatible" split mode), so frames are read by every c-blosc
// 1.x and by Decompress, and sizes are comparable with c-blosc's. The frame
// is never longer than len(src)+HeaderSize: data that does not compress is
// stored. Errors wrap ErrInvalidOptions. Compress is safe for concurrent
// use.
func Compress(dst, src []byte, opts Options) ([]byte, error) {
	code, ok := compCode(opts.Cname)
	if !ok {
		return dst, fmt.Errorf("%w: cname %q (want one of %v)", ErrInvalidOptions, opts.Cname, cnames)
	}
	if opts.Clevel < 0 || opts.Clevel > 9 {
		return dst, fmt.Errorf("%w: clevel %d not in 0..9", ErrInvalidOptions, opts.Clevel)
	}
	if opts.Shuffle < NoShuffle || opts.Shuffle > BitShuffle {
		return dst, fmt.Errorf("%w: shuffle %d", ErrInvalidOptions, int(opts.Shuffle))
	}
	if opts.Blocksize < 0 {
		return dst, fmt.Errorf("%w: blocksize %d", ErrInvalidOptions, opts.Blocksize)
	}
	if len(src) > MaxBufferSize {
		return dst, fmt.Errorf("%w: %d bytes, more than a frame holds (%d)", ErrInvalidOptions, len(src), MaxBufferSize)
	}
	ts := opts.Typesize
	if ts < 1 || ts > MaxTypeSize {
		ts = 1
	}
	nbytes := len(src)
	bs := computeBlocksize(code, opts.Clevel, ts, nbytes, opts.Blocksize)
	flags := byte(0)
	switch opts.Shuffle {
	case ByteShuffle:
		flags |= FlagShuffle
	case BitShuffle:
		flags |= FlagBitShuffle
	}
	split := splitBlock(code, ts, bs)
	if !split {
		flags |= FlagDontSplit
	}
	flags |= codeFormat[code] << 5

	n0 := len(dst)
	maxbytes := nbytes + HeaderSize
	dst = slices.Grow(dst, maxbytes)[:n0+maxbytes]
	out := dst[n0:]
	out[0] = formatVersion
	out[1] = codecVersion
	out[3] = byte(ts)
	binary.LittleEndian.PutUint32(out[4:], uint32(nbytes))
	binary.LittleEndian.PutUint32(out[8:], uint32(bs))
	if opts.Clevel > 0 && nbytes >= minBufferSize {
		e := encoder{code: code, clevel: opts.Clevel, ts: ts, bs: bs, flags: flags, split: split}
		if n := e.compress(out, src); n > 0 {
			out[2] = flags
			binary.LittleEndian.PutUint32(out[12:], uint32(n))
			return dst[:n0+n], nil
		}
	}
	out[2] = flags | FlagMemcpyed
	copy(out[HeaderSize:], src)
	binary.LittleEndian.PutUint32(out[12:], uint32(maxbytes))
	return dst, nil
}

// splitBlock is c-blosc 1.21's split decision in its default
// BLOSC_FORWARD_COMPAT_SPLIT mode: every codec but zstd splits blocks of
// small types into one stream per byte.
func splitBlock(code, ts, bs int) bool {
	return code != codeZstd && ts <= maxSplits && bs/ts >= minBufferSize
}

// hcr reports the codecs meant for high compression ratios, which get
// larger blocks.
func hcr(code int) bool { return code == codeLZ4HC || code == codeZlib || code == codeZstd }

// computeBlocksize is c-blosc 1.21's automatic block size (compute_blocksize).
func computeBlocksize(code, clevel, ts, nbytes, forced int) int {
	if nbytes < ts {
		return 1
	}
	bs := nbytes
	const l1 = 32 << 10
	if forced > 0 {
		bs = min(max(forced, minBufferSize), maxBlockSize)
	} else if nbytes >= l1 {
		bs = l1
		if hcr(code) {
			bs *= 2
		}
		switch clevel {
		case 0:
			bs /= 4
		case 1:
			bs /= 2
		case 2:
		case 3:
			bs *= 2
		case 4, 5:
			bs *= 4
		case 6, 7, 8:
			bs *= 8
		case 9:
			bs *= 8
			if hcr(code) {
				bs *= 2
			}
		}
	}
	if clevel > 0 && splitBlock(code, ts, bs) {
		bs = min(bs, 1<<18) * ts
		bs = min(max(bs, 1<<16), 1<<20)
	}
	bs = min(bs, nbytes)
	if bs > ts {
		bs = bs / ts * ts
	}
	return bs
}

// encoder holds the parameters of one Compress call.
type encoder struct {
	code, clevel, ts, bs int
	flags                byte
	split                bool
}

// compress writes the block offsets and blocks of src after the header in
// out (len(out) == len(src)+HeaderSize) and returns the frame size, or 0
// when the data does not fit (then the caller stores it).
func (e *encoder) compress(out, src []byte) int {
	nbytes := len(src)
	nblocks := (nbytes + e.bs - 1) / e.bs
	maxbytes := len(out)
	ntbytes := HeaderSize + 4*nblocks
	if ntbytes > maxbytes {
		return 0
	}
	doShuffle := e.flags&FlagShuffle != 0 && e.ts > 1
	doBitShuffle := e.flags&FlagBitShuffle != 0
	var tmp, tmp2 *[]byte
	if doShuffle || doBitShuffle {
		tmp = getScratch(e.bs)
		defer scratchPool.Put(tmp)
		if !doShuffle && e.ts > 1 {
			tmp2 = getScratch(e.bs)
			defer scratchPool.Put(tmp2)
		}
	}
	for j := range nblocks {
		binary.LittleEndian.PutUint32(out[HeaderSize+4*j:], uint32(ntbytes))
		start := j * e.bs
		bsize := min(e.bs, nbytes-start)
		leftover := bsize < e.bs
		block := src[start : start+bsize]
		switch {
		case doShuffle:
			shuffle((*tmp)[:bsize], block, e.ts)
			block = (*tmp)[:bsize]
		case doBitShuffle && bsize >= e.ts:
			var t2 []byte
			if tmp2 != nil {
				t2 = (*tmp2)[:bsize]
			}
			bitshuffle((*tmp)[:bsize], block, e.ts, t2)
			block = (*tmp)[:bsize]
		}
		nsplits := 1
		if e.split && !leftover {
			nsplits = e.ts
		}
		neblock := bsize / nsplits
		for s := range nsplits {
			ntbytes += 4
			in := block[s*neblock : (s+1)*neblock]
			maxout := neblock
			if e.code == codeSnappy {
				maxout = 32 + neblock + neblock/6
			}
			if ntbytes+maxout > maxbytes {
				maxout = maxbytes - ntbytes
				if maxout <= 0 {
					return 0
				}
			}
			cbytes := e.compressStream(out[ntbytes:ntbytes+maxout], in)
			if cbytes == 0 || cbytes == neblock {
				if ntbytes+neblock > maxbytes {
					return 0
				}
				copy(out[ntbytes:], in)
				cbytes = neblock
			}
			binary.LittleEndian.PutUint32(out[ntbytes-4:], uint32(cbytes))
			ntbytes += cbytes
		}
	}
	return ntbytes
}

// compressStream compresses src into dst and returns the size, or 0 when
// it does not fit in len(dst).
func (e *encoder) compressStream(dst, src []byte) int {
	switch e.code {
	case codeBloscLZ:
		return blosclzCompress(e.clevel, src, dst, e.split)
	case codeLZ4:
		c := lz4Fast.Get().(*lz4.CompressorCCompat)
		defer lz4Fast.Put(c)
		c.Acceleration = 10 - e.clevel
		n, err := c.CompressBlock(src, dst)
		if err != nil {
			return 0
		}
		return n
	case codeLZ4HC:
		c := lz4HC.Get().(*lz4.CompressorHC)
		defer lz4HC.Put(c)
		c.Level = lz4.CompressionLevel(1 << (8 + e.clevel))
		n, err := c.CompressBlock(src, dst)
		if err != nil {
			return 0
		}
		return n
	case codeSnappy:
		if len(dst) < 32+len(src)+len(src)/6 {
			return 0 // c-blosc's snappy refuses a smaller buffer
		}
		return fit(dst, snappy.Encode(dst, src))
	case codeZlib:
		b := zbufs.Get().(*bytes.Buffer)
		defer zbufs.Put(b)
		b.Reset()
		w := zlibWriter(b, e.clevel)
		_, err := w.Write(src)
		if err == nil {
			err = w.Close()
		}
		zlibWriters[e.clevel].Put(w)
		if err != nil {
			return 0
		}
		return fit(dst, b.Bytes())
	case codeZstd:
		return fit(dst, zstdEncoder(e.clevel).EncodeAll(src, dst[:0:len(dst)]))
	}
	return 0
}

// fit copies res into dst when it is not already there and returns its
// length, or 0 when it does not fit.
func fit(dst, res []byte) int {
	if len(res) > len(dst) || len(res) == 0 {
		return 0
	}
	if &res[0] != &dst[0] {
		copy(dst, res)
	}
	return len(res)
}

var (
	lz4Fast = sync.Pool{New: func() any { return new(lz4.CompressorCCompat) }}
	lz4HC   = sync.Pool{New: func() any { return new(lz4.CompressorHC) }}
	zbufs   = sync.Pool{New: func() any { return new(bytes.Buffer) }}

	zlibWriters [10]sync.Pool
)

func zlibWriter(b *bytes.Buffer, clevel int) *zlib.Writer {
	if w, ok := zlibWriters[clevel].Get().(*zlib.Writer); ok {
		w.Reset(b)
		return w
	}
	w, err := zlib.NewWriterLevel(b, clevel)
	if err != nil {
		panic(err) // clevel is 1..9 here
	}
	return w
}

// zstdLevel is the zstd level c-blosc 1.21 uses for a Blosc clevel.
func zstdLevel(clevel int) int {
	switch clevel {
	case 8:
		return 20
	case 9:
		return 22
	}
	return clevel*2 - 1
}

var zstdEncoders [5]struct {
	once sync.Once
	enc  *zstd.Encoder
}

// zstdEncoder returns the shared encoder for a Blosc clevel; klauspost's
// levels are coarser than the C library's, so several clevels share one.
func zstdEncoder(clevel int) *zstd.Encoder {
	lvl := zstd.EncoderLevelFromZstd(zstdLevel(clevel))
	slot := &zstdEncoders[lvl]
	slot.once.Do(func() {
		enc, err := zstd.NewWriter(nil,
			zstd.WithEncoderLevel(lvl),
			zstd.WithEncoderCRC(false),
			zstd.WithEncoderConcurrency(runtime.GOMAXPROCS(0)),
			zstd.WithZeroFrames(true))
		if err != nil {
			panic(err) // only on invalid options
		}
		slot.enc = enc
	})
	return slot.enc
}

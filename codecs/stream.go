package codecs

// Helpers for codecs built on streaming compressors (gzip here, zlib and
// bzip2 in package numcodecs): a bounded read of a decompressing reader,
// and a pool of compressors that append to a slice.

import (
	"io"
	"sync"
)

// ReadLimited appends everything r yields to dst and returns the extended
// slice. It writes into dst's free capacity when it has room and refuses
// output beyond limit bytes (a negative limit counts as 0) before allocating
// beyond it: the result is at most len(dst)+limit long. guess is the
// expected output size, clamped to 0..limit, used to size the first
// allocation when dst has too little room; the buffer then doubles, never
// past len(dst)+limit.
//
// io.EOF from r is a clean end. Any other error from r is returned
// unchanged, for the caller to map to its sentinels; output beyond limit is
// an error wrapping ErrCorrupt (r is never a source of ErrCorrupt for the
// codecs of this module, so callers can tell the two apart with errors.Is).
// On error the original dst is returned. ReadLimited is safe for concurrent
// use with distinct arguments.
func ReadLimited(dst []byte, r io.Reader, limit, guess int) ([]byte, error) {
	start := len(dst)
	limit = max(limit, 0)
	guess = min(max(guess, 0), limit)
	buf := dst
	if cap(buf)-start < guess {
		buf = make([]byte, start, start+guess)
		copy(buf, dst)
	}
	for {
		end := min(cap(buf), start+limit)
		if len(buf) == end {
			if end-start >= limit {
				// Full: any further byte is one too many.
				var one [1]byte
				n, err := readFull(r, one[:])
				if n > 0 {
					return dst, overLimit("", limit)
				}
				if err == io.EOF {
					return buf, nil
				}
				return dst, err
			}
			nb := make([]byte, len(buf), min(start+limit, max(2*cap(buf), start+4096)))
			copy(nb, buf)
			buf = nb
			continue
		}
		n, err := readFull(r, buf[len(buf):end])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return dst, err
		}
	}
}

// readFull reads into p until it is full or r fails, passing io.EOF
// through unchanged (unlike io.ReadFull) so a clean end stays
// distinguishable from a truncated stream. A reader returning nothing
// without an error 100 times in a row is io.ErrNoProgress.
func readFull(r io.Reader, p []byte) (int, error) {
	n, idle := 0, 0
	for n < len(p) {
		m, err := r.Read(p[n:])
		n += m
		if err != nil {
			return n, err
		}
		if m > 0 {
			idle = 0
		} else if idle++; idle > 100 {
			return n, io.ErrNoProgress
		}
	}
	return n, nil
}

// StreamWriter is a compressor that can be pointed at a new destination,
// such as *gzip.Writer or *zlib.Writer of github.com/klauspost/compress.
type StreamWriter interface {
	io.WriteCloser
	Reset(w io.Writer)
}

// WriterPool pools compressors of type W of one configuration (one pool per
// level) so that encoding a chunk reuses their state. The zero value is
// ready to use; a WriterPool is safe for concurrent use and must not be
// copied after first use.
type WriterPool[W StreamWriter] struct {
	pool sync.Pool
}

// pooledWriter is a compressor with the slice it writes to.
type pooledWriter[W StreamWriter] struct {
	out appendWriter
	w   W
}

// appendWriter is an io.Writer appending to a slice.
type appendWriter struct{ b []byte }

func (w *appendWriter) Write(p []byte) (int, error) {
	w.b = append(w.b, p...)
	return len(p), nil
}

// Append appends the compressed stream of src (written and closed) to dst.
// It takes a compressor from the pool, or makes one with newWriter when the
// pool is empty, and returns it to the pool afterwards. Errors from
// newWriter and from the compressor are returned unchanged, with dst.
func (p *WriterPool[W]) Append(dst, src []byte, newWriter func(io.Writer) (W, error)) ([]byte, error) {
	w, _ := p.pool.Get().(*pooledWriter[W])
	if w == nil {
		w = &pooledWriter[W]{}
		zw, err := newWriter(&w.out)
		if err != nil {
			return dst, err
		}
		w.w = zw
	}
	w.out.b = dst
	w.w.Reset(&w.out)
	_, err := w.w.Write(src)
	if err == nil {
		err = w.w.Close()
	}
	out := w.out.b
	w.out.b = nil
	p.pool.Put(w)
	if err != nil {
		return dst, err
	}
	return out, nil
}

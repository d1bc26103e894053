package numcodecs

// The numcodecs lzma compressor (bytes -> bytes), with
// github.com/ulikunitz/xz.
//
// Format: https://numcodecs.readthedocs.io/en/stable/compression/lzma.html
// (Python's lzma.compress: an .xz stream, a legacy .lzma "alone" stream, or
// a raw LZMA2 stream)
// JSON name: "numcodecs.lzma"
// Configuration example (Zarr v2: {"id": "lzma", "format": 1, "check": -1,
// "preset": null, "filters": null}):
//
//	{"name": "numcodecs.lzma", "configuration": {"format": 1, "check": -1, "preset": null, "filters": null}}

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"slices"

	"github.com/gozarr/gozarr/codecs"
	"github.com/ulikunitz/xz"
	"github.com/ulikunitz/xz/lzma"
)

// LZMA formats and checks, as Python's lzma module numbers them.
const (
	lzmaFormatXZ    = 1
	lzmaFormatAlone = 2
	lzmaFormatRaw   = 3
	lzmaFilterLZMA2 = 0x21
)

// presetDict is liblzma's dictionary size for each preset 0..9.
var presetDict = [10]int{1 << 18, 1 << 20, 1 << 21, 1 << 22, 1 << 22, 1 << 23, 1 << 23, 1 << 24, 1 << 25, 1 << 26}

// LZMA is the "numcodecs.lzma" compressor: format 1 (.xz, the default),
// 2 (.lzma "alone") or 3 (raw, with exactly one LZMA2 filter
// {"id": 33, "preset": n} or {"id": 33, "dict_size": n}); check -1
// (the format's default), 0 (none), 1 (CRC-32), 4 (CRC-64) or 10
// (SHA-256); preset 0..9 or null (6). Other filter chains (BCJ, delta,
// raw LZMA1) are ErrUnsupported. Decoding accepts what liblzma writes for
// these: one .xz stream of one block, whose LZMA2 dictionary is cut to the
// decode limit before it is allocated (a stream never refers further back
// than its own length), so hostile headers cannot claim gigabytes.
// Encoded streams decode with Python's lzma; they are not byte-identical
// to liblzma's. An LZMA is immutable and safe for concurrent use.
type LZMA struct {
	format, check int
	preset        *int
	filters       json.RawMessage // as configured (null: nil)
	dictSize      int             // raw format: the LZMA2 dictionary
}

// NewLZMA returns the lzma codec for a numcodecs configuration.
func NewLZMA(format, check int, preset *int, filters json.RawMessage) (*LZMA, error) {
	l := &LZMA{format: format, check: check, preset: preset}
	if len(bytes.TrimSpace(filters)) > 0 && string(bytes.TrimSpace(filters)) != "null" {
		l.filters = filters
	}
	if preset != nil && (*preset < 0 || *preset > 9) {
		return nil, fmt.Errorf("%w: numcodecs.lzma: preset %d, want 0..9", codecs.ErrInvalidConfig, *preset)
	}
	switch check {
	case -1, 0, 1, 4, 10:
	default:
		return nil, fmt.Errorf("%w: numcodecs.lzma: check %d, want -1, 0, 1, 4 or 10", codecs.ErrInvalidConfig, check)
	}
	switch format {
	case lzmaFormatXZ, lzmaFormatAlone:
		if l.filters != nil {
			return nil, fmt.Errorf("%w: numcodecs.lzma: custom filter chains", ErrUnsupported)
		}
	case lzmaFormatRaw:
		var fs []struct {
			ID       *int64 `json:"id"`
			Preset   *int   `json:"preset"`
			DictSize *int64 `json:"dict_size"`
		}
		if err := json.Unmarshal(l.filters, &fs); err != nil || len(fs) == 0 {
			return nil, fmt.Errorf("%w: numcodecs.lzma: format 3 (raw) needs a filter list", codecs.ErrInvalidConfig)
		}
		if len(fs) != 1 || fs[0].ID == nil || *fs[0].ID != lzmaFilterLZMA2 {
			return nil, fmt.Errorf("%w: numcodecs.lzma: raw filter chains other than one LZMA2 filter (id 33)", ErrUnsupported)
		}
		l.dictSize = presetDict[6]
		if p := fs[0].Preset; p != nil {
			if *p < 0 || *p > 9 {
				return nil, fmt.Errorf("%w: numcodecs.lzma: filter preset %d, want 0..9", codecs.ErrInvalidConfig, *p)
			}
			l.dictSize = presetDict[*p]
		}
		if d := fs[0].DictSize; d != nil {
			if *d < lzma.MinDictCap || *d > 1<<31-1 {
				return nil, fmt.Errorf("%w: numcodecs.lzma: dict_size %d out of range", codecs.ErrInvalidConfig, *d)
			}
			l.dictSize = int(*d)
		}
	default:
		return nil, fmt.Errorf("%w: numcodecs.lzma: format %d, want 1 (xz), 2 (alone) or 3 (raw)", codecs.ErrInvalidConfig, format)
	}
	return l, nil
}

func init() {
	codecs.Register(prefix+"lzma", func(configuration json.RawMessage) (codecs.Codec, error) {
		cfg := struct {
			Format  *int            `json:"format"`
			Check   *int            `json:"check"`
			Preset  *int            `json:"preset"`
			Filters json.RawMessage `json:"filters"`
		}{}
		if err := codecs.DecodeConfig(configuration, &cfg); err != nil {
			return nil, err
		}
		format, check := lzmaFormatXZ, -1
		if cfg.Format != nil {
			format = *cfg.Format
		}
		if cfg.Check != nil {
			check = *cfg.Check
		}
		return NewLZMA(format, check, cfg.Preset, cfg.Filters)
	})
}

// Name returns "numcodecs.lzma".
func (l *LZMA) Name() string { return prefix + "lzma" }

// Configuration returns {"format", "check", "preset", "filters"}.
func (l *LZMA) Configuration() any {
	filters := json.RawMessage("null")
	if l.filters != nil {
		filters = l.filters
	}
	return struct {
		Format  int             `json:"format"`
		Check   int             `json:"check"`
		Preset  *int            `json:"preset"`
		Filters json.RawMessage `json:"filters"`
	}{l.format, l.check, l.preset, filters}
}

// MaxEncodedSize bounds the encoded size of n bytes (LZMA's worst case,
// stored chunks, plus headers).
func (l *LZMA) MaxEncodedSize(n int) int { return n + n/64 + 1024 }

func (l *LZMA) dict() int {
	if l.format == lzmaFormatRaw {
		return l.dictSize
	}
	if l.preset != nil {
		return presetDict[*l.preset]
	}
	return presetDict[6]
}

// Encode appends the compressed src to dst.
func (l *LZMA) Encode(dst, src []byte) ([]byte, error) {
	buf := bytes.NewBuffer(dst)
	// A dictionary larger than the input gains nothing.
	dc := max(min(l.dict(), len(src)), lzma.MinDictCap)
	var w io.WriteCloser
	var err error
	switch l.format {
	case lzmaFormatXZ:
		c := xz.WriterConfig{DictCap: dc, CheckSum: xz.CRC64}
		switch l.check {
		case 0:
			c.CheckSum = xz.None
		case 1:
			c.CheckSum = xz.CRC32
		case 10:
			c.CheckSum = xz.SHA256
		}
		w, err = c.NewWriter(buf)
	case lzmaFormatAlone:
		w, err = lzma.WriterConfig{DictCap: dc, EOSMarker: true}.NewWriter(buf)
	default:
		w, err = lzma.Writer2Config{DictCap: dc}.NewWriter2(buf)
	}
	if err == nil {
		if _, err = w.Write(src); err == nil {
			err = w.Close()
		}
	}
	if err != nil {
		return dst, fmt.Errorf("%w: numcodecs.lzma: %v", codecs.ErrInvalidConfig, err)
	}
	return buf.Bytes(), nil
}

// Decode appends the decompressed src to dst. Malformed streams, streams
// of several blocks and output beyond limit are ErrCorrupt.
func (l *LZMA) Decode(dst, src []byte, limit int) ([]byte, error) {
	limit = max(limit, 0)
	dictLimit := max(limit, lzma.MinDictCap)
	var r io.Reader
	var err error
	switch l.format {
	case lzmaFormatXZ:
		var s []byte
		if s, err = capXZDict(src, dictLimit); err == nil {
			r, err = xz.ReaderConfig{DictCap: lzma.MinDictCap, SingleStream: true}.NewReader(bytes.NewReader(s))
		}
	case lzmaFormatAlone:
		if len(src) < lzma.HeaderLen {
			return dst, fmt.Errorf("%w: numcodecs.lzma: %d bytes, shorter than a header", codecs.ErrCorrupt, len(src))
		}
		s := append([]byte(nil), src...)
		if size := int64(binary.LittleEndian.Uint64(s[5:])); size != -1 && (size < 0 || size > int64(limit)) {
			return dst, fmt.Errorf("%w: numcodecs.lzma: header claims %d bytes: %w", codecs.ErrCorrupt, size, &codecs.LimitError{What: "decoded size", Limit: limit})
		}
		if d := binary.LittleEndian.Uint32(s[1:]); int64(d) > int64(dictLimit) {
			binary.LittleEndian.PutUint32(s[1:], uint32(dictLimit))
		}
		r, err = lzma.ReaderConfig{DictCap: dictLimit}.NewReader(bytes.NewReader(s))
	default:
		r, err = lzma.Reader2Config{DictCap: max(min(l.dictSize, dictLimit), lzma.MinDictCap)}.NewReader2(bytes.NewReader(src))
	}
	if err != nil {
		return dst, fmt.Errorf("%w: numcodecs.lzma: %v", codecs.ErrCorrupt, err)
	}
	return readBounded(dst, r, limit, len(src))
}

// readBounded appends what r yields to dst, growing dst's memory at most
// to limit bytes more, and fails with ErrCorrupt beyond limit.
func readBounded(dst []byte, r io.Reader, limit, hint int) ([]byte, error) {
	start := len(dst)
	out := dst
	for idle := 0; ; idle++ {
		if idle > 100 {
			return dst, fmt.Errorf("%w: numcodecs.lzma: %v", codecs.ErrCorrupt, io.ErrNoProgress)
		}
		if len(out) == cap(out) {
			got := len(out) - start
			if got == limit {
				// Full: the stream must end here (probe without growing).
				var one [1]byte
				n, err := r.Read(one[:])
				switch {
				case n > 0:
					return dst, fmt.Errorf("%w: %w", codecs.ErrCorrupt, &codecs.LimitError{Codec: "numcodecs.lzma", Limit: limit})
				case err == nil:
					continue
				case errors.Is(err, io.EOF):
					return out, nil
				case err != nil:
					return dst, fmt.Errorf("%w: numcodecs.lzma: %v", codecs.ErrCorrupt, err)
				}
				continue
			}
			out = slices.Grow(out, min(limit-got, max(4096, 4*hint, got)))
		}
		n, err := r.Read(out[len(out):cap(out)])
		out = out[:len(out)+n]
		if n > 0 {
			idle = 0
		}
		if len(out)-start > limit {
			return dst, fmt.Errorf("%w: %w", codecs.ErrCorrupt, &codecs.LimitError{Codec: "numcodecs.lzma", Limit: limit})
		}
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return dst, fmt.Errorf("%w: numcodecs.lzma: %v", codecs.ErrCorrupt, err)
		}
	}
}

// uvarint reads an xz multibyte integer.
func uvarint(b []byte) (uint64, int, error) {
	v, n := binary.Uvarint(b)
	if n <= 0 || n > 9 {
		return 0, 0, errors.New("bad multibyte integer")
	}
	return v, n, nil
}

// capXZDict checks that an .xz stream holds one block with one LZMA2
// filter and returns a copy whose LZMA2 dictionary size is at most dictCap
// (the block header's CRC-32 recomputed), so the decoder allocates no
// more.
func capXZDict(src []byte, dictCap int) ([]byte, error) {
	bad := func(why string) ([]byte, error) { return nil, errors.New("xz: " + why) }
	magic := []byte{0xfd, '7', 'z', 'X', 'Z', 0}
	switch {
	case len(src) < 6 && bytes.HasPrefix(magic, src) || len(src) >= 6 && bytes.Equal(src[:6], magic) && len(src) < 24:
		return bad(fmt.Sprintf("truncated stream: %d bytes, shorter than an .xz stream's headers", len(src)))
	case len(src) < 6 || !bytes.Equal(src[:6], magic):
		return bad("not an .xz stream (no .xz magic)")
	case !bytes.Equal(src[len(src)-2:], []byte("YZ")):
		return bad("truncated stream: no stream footer at the end (an .xz stream ends in \"YZ\")")
	}
	back := (int64(binary.LittleEndian.Uint32(src[len(src)-8:])) + 1) * 4
	idx := int64(len(src)) - 12 - back
	if idx < 12 || src[idx] != 0 {
		return bad("bad index position")
	}
	records, _, err := uvarint(src[idx+1:])
	if err != nil || records != 1 {
		return bad("want exactly one block (as Python's lzma writes)")
	}
	s := append([]byte(nil), src...)
	h := s[12:idx]
	if len(h) == 0 || h[0] == 0 {
		return bad("no block header")
	}
	hl := (int(h[0]) + 1) * 4
	if hl > len(h) {
		return bad("block header past the end")
	}
	hdr := h[:hl]
	flags := hdr[1]
	if flags&3 != 0 || flags&0x3c != 0 {
		return bad("want one filter (LZMA2)")
	}
	p := 2
	for _, present := range []bool{flags&0x40 != 0, flags&0x80 != 0} {
		if present {
			_, n, err := uvarint(hdr[p : hl-4])
			if err != nil {
				return bad(err.Error())
			}
			p += n
		}
	}
	id, n, err := uvarint(hdr[p : hl-4])
	if err != nil || id != lzmaFilterLZMA2 {
		return bad("the filter is not LZMA2")
	}
	p += n
	size, n, err := uvarint(hdr[p : hl-4])
	if err != nil || size != 1 || p+n >= hl-4 {
		return bad("bad LZMA2 properties")
	}
	p += n
	if hdr[p] > 40 {
		return bad("bad LZMA2 dictionary size")
	}
	want := byte(0)
	for want < 40 && lzma2Dict(want) < int64(dictCap) {
		want++
	}
	if hdr[p] > want {
		hdr[p] = want
		binary.LittleEndian.PutUint32(hdr[hl-4:], crc32.ChecksumIEEE(hdr[:hl-4]))
	}
	return s, nil
}

// lzma2Dict is the dictionary size an LZMA2 property byte p (0..40) encodes.
func lzma2Dict(p byte) int64 {
	if p == 40 {
		return 1<<32 - 1
	}
	return int64(2|p&1) << (p/2 + 11)
}

// Package icechunk reads and writes Icechunk repositories (spec versions 1
// and 2) over any gozarr store: branches, tags, snapshots and their
// ancestry, and a snapshot as a read-only store.Reader and store.Lister, so
// zarr.OpenArray over it reads through the one engine like any other store.
//
// The read path is the spec's: the repo info object (version 2) or the
// refs/ files (version 1) name a snapshot; the snapshot lists the nodes and,
// per array, the manifests covering regions of its chunk grid; a manifest
// holds the chunk references, sorted, found by binary search inside the
// manifest's own bytes (no value per reference is built). Only the manifests
// whose extents hold a requested chunk are fetched. Snapshots and manifests
// are held in one cache bounded in bytes (WithCacheBytes).
//
// Every flatbuffer is read by a verifying reader: offsets and lengths are
// checked before they are followed, so truncated or corrupt files yield
// errors wrapping ErrCorrupt, never a panic, and decompressed sizes are
// bounded (WithMaxObjectBytes).
//
// Sessions (Repository.Session) write commits in the repository's spec
// version: spec 2 moves a branch by a conditional update of the repo object
// (its old version copied to overwritten/ first), spec 1 by a conditional
// write (If-Match) of the branch's refs/branch.NAME/ref.json, with new refs
// written create-only and deleted tags leaving tombstones.
//
// Virtual chunk references (chunks inside other files) are read through a
// store/virtual Resolver given WithVirtual, whose allowed prefixes decide
// what may be read; without one they are refused with ErrVirtual.
package icechunk

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// Sentinel errors; errors from this package wrap one of them.
var (
	// ErrNotRepository reports a store holding no Icechunk repository.
	ErrNotRepository = errors.New("icechunk: not a repository")
	// ErrCorrupt reports a malformed repository file: bad header, bad
	// flatbuffer, inconsistent references.
	ErrCorrupt = errors.New("icechunk: corrupt repository file")
	// ErrUnsupported reports a valid file this package cannot read (an
	// unknown spec version, file type or compression).
	ErrUnsupported = errors.New("icechunk: unsupported")
	// ErrRefNotFound reports a branch, tag or snapshot that does not exist.
	ErrRefNotFound = errors.New("icechunk: no such branch, tag or snapshot")
	// ErrVirtual reports a virtual chunk reference read from a repository
	// opened without WithVirtual.
	ErrVirtual = errors.New("icechunk: virtual chunk reference without a resolver")
	// ErrTooLarge reports a repository file past WithMaxObjectBytes.
	ErrTooLarge = errors.New("icechunk: file too large")
)

// File types of the binary header.
const (
	fileSnapshot    = 1
	fileManifest    = 2
	fileTxLog       = 4
	fileRepoInfo    = 6
	headerLen       = 12 + 24 + 3
	compressionNone = 0
	compressionZstd = 1
)

// fileNames names the file types in errors.
var fileNames = map[uint8]string{fileSnapshot: "snapshot", fileManifest: "manifest", fileTxLog: "transaction log", fileRepoInfo: "repo object"}

var magic = []byte("ICE🧊CHUNK")

// fileHeader is the parsed binary header of a metadata file.
type fileHeader struct {
	implementation string
	spec           uint8
	fileType       uint8
	compression    uint8
}

// decodeSelf is decodeFile for a file that states its own id (snapshots,
// manifests): it returns the header and the flatbuffer's root table after
// checking that the root's id (an ObjectId12 at field 0) is id.
func decodeSelf(data []byte, want uint8, maxBytes int64, id ID) (fileHeader, fbTable, error) {
	h, buf, err := decodeFile(data, want, maxBytes)
	if err != nil {
		return h, fbTable{}, err
	}
	root, err := fbRoot(buf)
	if err != nil {
		return h, fbTable{}, err
	}
	idb, err := root.inline(0, 12)
	if err != nil {
		return h, fbTable{}, err
	}
	if idb == nil || !bytes.Equal(idb, id[:]) {
		return h, fbTable{}, corruptf("%s %v holds id %x", fileNames[want], id, idb)
	}
	return h, root, nil
}

// decodeFile checks the header of a metadata file of type want and returns
// its flatbuffer payload, decompressed to at most maxBytes.
func decodeFile(data []byte, want uint8, maxBytes int64) (fileHeader, []byte, error) {
	var h fileHeader
	if len(data) < headerLen {
		return h, nil, corruptf("file of %d bytes, shorter than the %d-byte header", len(data), headerLen)
	}
	if !bytes.Equal(data[:12], magic) {
		return h, nil, corruptf("bad magic % x", data[:12])
	}
	h.implementation = strings.TrimRight(string(data[12:36]), " \x00")
	h.spec, h.fileType, h.compression = data[36], data[37], data[38]
	if h.spec != 1 && h.spec != 2 {
		return h, nil, fmt.Errorf("%w: spec version %d", ErrUnsupported, h.spec)
	}
	if h.fileType != want {
		return h, nil, corruptf("file type %d, want %d", h.fileType, want)
	}
	body := data[headerLen:]
	switch h.compression {
	case compressionNone:
		if int64(len(body)) > maxBytes {
			return h, nil, fmt.Errorf("%w: %d bytes, limit %d", ErrTooLarge, len(body), maxBytes)
		}
		return h, body, nil
	case compressionZstd:
		out, err := unzstd(body, maxBytes)
		return h, out, err
	}
	return h, nil, fmt.Errorf("%w: compression %d", ErrUnsupported, h.compression)
}

// zstdMaxWindow bounds the window a frame may ask for (what a decoder
// allocates before the first byte); Icechunk's files use a few MiB.
const zstdMaxWindow = 128 << 20

var zdecoders sync.Pool // of *zstd.Decoder, streaming, reset per file

// unzstd decompresses src (one or more frames) into at most maxBytes.
func unzstd(src []byte, maxBytes int64) ([]byte, error) {
	var hdr zstd.Header
	capHint := 0
	if err := hdr.Decode(src); err == nil && hdr.HasFCS {
		if hdr.FrameContentSize > uint64(maxBytes) {
			return nil, fmt.Errorf("%w: frame declares %d bytes, limit %d", ErrTooLarge, hdr.FrameContentSize, maxBytes)
		}
		capHint = int(hdr.FrameContentSize)
	}
	d, _ := zdecoders.Get().(*zstd.Decoder)
	if d == nil {
		var err error
		if d, err = zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxWindow(zstdMaxWindow)); err != nil {
			return nil, fmt.Errorf("icechunk: zstd: %w", err)
		}
	}
	defer zdecoders.Put(d)
	if err := d.Reset(bytes.NewReader(src)); err != nil {
		return nil, corruptf("zstd: %v", err)
	}
	var buf bytes.Buffer
	buf.Grow(capHint)
	n, err := buf.ReadFrom(io.LimitReader(d, maxBytes+1))
	if err != nil {
		return nil, corruptf("zstd: %v", err)
	}
	if n > maxBytes {
		return nil, fmt.Errorf("%w: decompresses past %d bytes", ErrTooLarge, maxBytes)
	}
	return buf.Bytes(), nil
}

// Object ids.

// ID is a 12-byte object id (snapshots, manifests, chunks), written as 20
// Crockford base-32 characters.
type ID [12]byte

// NodeID is the 8-byte id of a node, stable across snapshots.
type NodeID [8]byte

const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

func b32(b []byte) string {
	out := make([]byte, 0, (len(b)*8+4)/5)
	var acc uint32
	bits := 0
	for _, c := range b {
		acc = acc<<8 | uint32(c)
		bits += 8
		for bits >= 5 {
			bits -= 5
			out = append(out, crockford[(acc>>bits)&31])
		}
	}
	if bits > 0 {
		out = append(out, crockford[(acc<<(5-bits))&31])
	}
	return string(out)
}

// String returns the id's Crockford base-32 form, as in file names.
func (id ID) String() string { return b32(id[:]) }

// String returns the node id's Crockford base-32 form.
func (id NodeID) String() string { return b32(id[:]) }

// ParseID parses a 20-character Crockford base-32 snapshot (or other
// object) id, case-insensitively, with Crockford's aliases (O=0, I=L=1).
func ParseID(s string) (ID, error) {
	var id ID
	if len(s) != 20 {
		return id, fmt.Errorf("%w: id %q is not 20 characters", ErrRefNotFound, s)
	}
	var acc uint32
	bits, n := 0, 0
	for i := 0; i < len(s); i++ {
		v := crockValue(s[i])
		if v < 0 {
			return id, fmt.Errorf("%w: id %q: bad character %q", ErrRefNotFound, s, s[i])
		}
		acc = acc<<5 | uint32(v)
		bits += 5
		if bits >= 8 {
			bits -= 8
			id[n] = byte(acc >> bits)
			n++
		}
	}
	if acc&(1<<bits-1) != 0 {
		return id, fmt.Errorf("%w: id %q: nonzero padding bits", ErrRefNotFound, s)
	}
	return id, nil
}

func crockValue(c byte) int {
	switch {
	case c >= 'a' && c <= 'z':
		c -= 'a' - 'A'
	}
	switch c {
	case 'O':
		return 0
	case 'I', 'L':
		return 1
	}
	return strings.IndexByte(crockford, c)
}

package hdf5

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gozarr/gozarr/store/mem"
)

func readTestdata(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// virtualizeBytes opens data as an HDF5 file and makes references to it.
func virtualizeBytes(data []byte, opts ...Option) error {
	ctx := context.Background()
	st := mem.New()
	if err := st.Set(ctx, "f.h5", data); err != nil {
		return err
	}
	f, err := Open(ctx, st, "f.h5", opts...)
	if err != nil {
		return err
	}
	_, err = References(ctx, f, RefsOptions{})
	return err
}

// TestTruncated: a file cut anywhere before its end is an error (a
// structure or a chunk lies past the cut), never a panic or a partial
// listing.
func TestTruncated(t *testing.T) {
	for _, tc := range []struct {
		name string
		step int
	}{{"tiny_latest.h5", 1}, {"tiny_earliest.h5", 7}, {"cf.nc", 61}, {"latest.h5", 997}, {"earliest.h5", 331}} {
		data := readTestdata(t, tc.name)
		if err := virtualizeBytes(data); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		for cut := 0; cut < len(data); cut += tc.step {
			err := virtualizeBytes(data[:cut])
			if err == nil {
				t.Fatalf("%s cut at %d of %d: no error", tc.name, cut, len(data))
			}
			if !errors.Is(err, ErrFormat) && !errors.Is(err, ErrLimit) {
				t.Fatalf("%s cut at %d: %v wraps neither ErrFormat nor ErrLimit", tc.name, cut, err)
			}
		}
	}
}

// patch returns a copy of data with b written at off.
func patch(data []byte, off int, b []byte) []byte {
	out := append([]byte(nil), data...)
	copy(out[off:], b)
	return out
}

// messageOffset returns where the data of message typ of the object at
// path lies in the file.
func messageOffset(t *testing.T, name string, data []byte, path string, typ uint16) (int, *objectHeader) {
	t.Helper()
	f := openTestFile(t, name)
	n, err := f.Node(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	h, err := f.object(context.Background(), n.Addr)
	if err != nil {
		t.Fatal(err)
	}
	m := h.first(typ)
	if m == nil {
		t.Fatalf("%s has no message %d", path, typ)
	}
	i := bytes.Index(data[n.Addr:], m.data)
	if i < 0 {
		t.Fatalf("message not found")
	}
	return int(n.Addr) + i, h
}

// fixChecksum recomputes the checksum of the first chunk of the version 2
// object header at addr.
func fixChecksum(data []byte, addr int) {
	flags := data[addr+5]
	n := 6
	if flags&0x20 != 0 {
		n += 16
	}
	if flags&0x10 != 0 {
		n += 4
	}
	sb := 1 << (flags & 3)
	var size uint64
	for i := sb - 1; i >= 0; i-- {
		size = size<<8 | uint64(data[addr+n+i])
	}
	end := addr + n + sb + int(size)
	binary.LittleEndian.PutUint32(data[end:], lookup3(data[addr:end]))
}

func wantErr(t *testing.T, what string, err, sentinel error, text string) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: no error", what)
	}
	if !errors.Is(err, sentinel) || !strings.Contains(err.Error(), text) {
		t.Fatalf("%s: %v, want %v mentioning %q", what, err, sentinel, text)
	}
}

// TestHostile: B-tree nodes that point into each other, an address past
// the end, a chunk of 2^62 bytes, absurd chunk dimensions and the limits
// of Options give clear errors.
func TestHostile(t *testing.T) {
	ctx := context.Background()
	early := readTestdata(t, "earliest.h5")

	// The "many" group's B-tree: its root made a level-1 node whose first
	// child is itself.
	off, _ := messageOffset(t, "earliest.h5", early, "/many", msgSymbolTable)
	root := binary.LittleEndian.Uint64(early[off:])
	bad := patch(early, int(root)+5, []byte{1})
	binary.LittleEndian.PutUint64(bad[int(root)+8+16+8:], root)
	wantErr(t, "B-tree cycle", virtualizeBytes(bad), ErrFormat, "cycle")

	// Two chunk B-trees (rank 2: 32-byte keys) made to point into each
	// other: each root a level-1 node whose first child is the other's
	// root; and one root whose two children are the same node (the
	// "sparse" leaf, of the same chunk shape as "fletcher").
	btreeOf := func(name string) int {
		off, _ := messageOffset(t, "earliest.h5", early, name, msgLayout)
		return int(binary.LittleEndian.Uint64(early[off+3:])) // version, class, rank, address
	}
	r1, r2 := btreeOf("/chunked_gzip_shuffle"), btreeOf("/fletcher")
	const child0, child1 = 24 + 32, 24 + 32 + 8 + 32 // header, key (then child, key, child)
	bad = patch(early, r1+5, []byte{1})
	binary.LittleEndian.PutUint64(bad[r1+child0:], uint64(r2))
	bad[r2+5] = 1
	binary.LittleEndian.PutUint64(bad[r2+child0:], uint64(r1))
	wantErr(t, "B-trees into each other", virtualizeBytes(bad), ErrFormat, "level")
	r3 := btreeOf("/sparse")
	bad = patch(early, r2+5, []byte{1})
	binary.LittleEndian.PutUint64(bad[r2+child0:], uint64(r3))
	binary.LittleEndian.PutUint64(bad[r2+child1:], uint64(r3))
	wantErr(t, "a B-tree node twice", virtualizeBytes(bad), ErrFormat, "cycle")

	// A contiguous dataset whose data lies past the end of the file.
	off, _ = messageOffset(t, "earliest.h5", early, "/contiguous_be_f8", msgLayout)
	bad = patch(early, off+2, binary.LittleEndian.AppendUint64(nil, 1<<40))
	wantErr(t, "address past the end", virtualizeBytes(bad), ErrFormat, "outside the file")

	// Chunks of 2^31 × 8 elements.
	off, _ = messageOffset(t, "earliest.h5", early, "/chunked_gzip_shuffle", msgLayout)
	bad = patch(early, off+3+8, binary.LittleEndian.AppendUint32(nil, 1<<31))
	wantErr(t, "huge chunks", virtualizeBytes(bad), ErrLimit, "chunks of")

	// A single filtered chunk of 2^62 bytes (the header's checksum made
	// right, so the size itself is what is refused).
	late := readTestdata(t, "latest.h5")
	off, h := messageOffset(t, "latest.h5", late, "/single_chunk_gzip", msgLayout)
	m := h.first(msgLayout).data
	sizeAt := 2 + 1 + 1 + 1 + 3*int(m[4]) + 1 // version, class, flags, rank, enc, dims, index type
	bad = patch(late, off+sizeAt, binary.LittleEndian.AppendUint64(nil, 1<<62))
	fixChecksum(bad, int(h.addr))
	wantErr(t, "2^62-byte chunk", virtualizeBytes(bad), ErrFormat, "outside the file")
	// Without the fix the checksum catches it.
	bad = patch(late, off+sizeAt, binary.LittleEndian.AppendUint64(nil, 1<<62))
	wantErr(t, "bad checksum", virtualizeBytes(bad), ErrFormat, "checksum")

	// Limits.
	wantErr(t, "metadata limit", virtualizeBytes(late, WithMaxMetadataBytes(64<<10)), ErrLimit, "metadata")
	wantErr(t, "chunk limit", virtualizeBytes(late, WithMaxChunks(1000)), ErrLimit, "limit 1000")
	wantErr(t, "object limit", virtualizeBytes(late, WithMaxObjects(10)), ErrLimit, "limit")
	if _, err := Open(ctx, mem.New(), "none"); err == nil {
		t.Fatal("missing key: no error")
	}
	wantErr(t, "not HDF5", virtualizeBytes(bytes.Repeat([]byte("x"), 5000)), ErrFormat, "signature")
	for _, o := range []Option{WithMaxChunks(0), WithMaxMetadataBytes(-1), WithMaxObjects(0)} {
		if _, err := Open(ctx, mem.New(), "none", o); err == nil {
			t.Fatal("a nonsense option accepted")
		}
	}
}

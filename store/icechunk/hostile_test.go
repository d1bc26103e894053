package icechunk

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/internal/arraytest"
	"github.com/gozarr/gozarr/store/mem"
)

const fixtureDir = "../../testdata/icechunk"

// loadRepoFiles reads a fixture repository into a memory store.
func loadRepoFiles(t testing.TB, name string) *mem.Store {
	t.Helper()
	s := mem.New()
	root := filepath.Join(fixtureDir, name)
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		return s.Set(context.Background(), filepath.ToSlash(rel), b)
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// plain rewrites a metadata file with its payload uncompressed, so tests
// and fuzzers can change the flatbuffer itself.
func plain(t testing.TB, data []byte, typ uint8) []byte {
	t.Helper()
	_, buf, err := decodeFile(data, typ, 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	out := append([]byte(nil), data[:headerLen]...)
	out[38] = compressionNone
	return append(out, buf...)
}

// readAll checks out every branch and reads every key, returning the
// first error.
func readAll(ctx context.Context, src store.Reader) error {
	r, err := Open(ctx, src)
	if err != nil {
		return err
	}
	br, err := r.Branches(ctx)
	if err != nil {
		return err
	}
	for _, head := range br {
		anc, err := r.Ancestry(ctx, head)
		if err != nil {
			return err
		}
		for _, si := range anc {
			if err := readSnapshot(ctx, r, si.ID); err != nil {
				return err
			}
		}
	}
	return nil
}

func readSnapshot(ctx context.Context, r *Repository, id ID) error {
	{
		s, err := r.Checkout(ctx, id)
		if err != nil {
			return err
		}
		for k, err := range s.List(ctx, "") {
			if err != nil {
				return err
			}
			if _, err := s.Get(ctx, k, store.Full()); err != nil {
				return err
			}
		}
	}
	return nil
}

func TestHostileHeaders(t *testing.T) {
	good, err := os.ReadFile(filepath.Join(fixtureDir, "spec2/repo"))
	if err != nil {
		t.Fatal(err)
	}
	edit := func(f func(b []byte) []byte) []byte { return f(append([]byte(nil), good...)) }
	cases := []struct {
		name string
		data []byte
		want error
	}{
		{"empty", nil, ErrCorrupt},
		{"short", good[:20], ErrCorrupt},
		{"magic", edit(func(b []byte) []byte { b[3] = 'X'; return b }), ErrCorrupt},
		{"spec 3", edit(func(b []byte) []byte { b[36] = 3; return b }), ErrUnsupported},
		{"type snapshot", edit(func(b []byte) []byte { b[37] = fileSnapshot; return b }), ErrCorrupt},
		{"compression 7", edit(func(b []byte) []byte { b[38] = 7; return b }), ErrUnsupported},
		{"zstd garbage", edit(func(b []byte) []byte { return append(b[:headerLen], 1, 2, 3, 4, 5, 6, 7, 8) }), ErrCorrupt},
		{"no payload", good[:headerLen], ErrCorrupt},
	}
	for _, c := range cases {
		if _, err := parseRepoInfo(c.data, 1<<20); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
	// a zstd frame declaring more than the limit is refused before decoding
	if _, err := parseRepoInfo(good, 64); !errors.Is(err, ErrTooLarge) {
		t.Errorf("limit 64: %v, want ErrTooLarge", err)
	}
}

// TestTruncated cuts every metadata file of both fixtures at many points:
// every read fails with an error (no panic), and never ErrNotFound.
func TestTruncated(t *testing.T) {
	ctx := context.Background()
	for _, name := range []string{"spec1", "spec2"} {
		src := loadRepoFiles(t, name)
		var files []string
		for _, p := range []string{"repo", "snapshots/", "manifests/"} {
			files = append(files, arraytest.Keys(t, src, p)...)
		}
		for _, k := range files {
			orig, _ := src.Get(ctx, k, store.Full())
			typ := uint8(fileSnapshot)
			switch {
			case k == "repo":
				typ = fileRepoInfo
			case k[0] == 'm':
				typ = fileManifest
			}
			for _, data := range [][]byte{orig, plain(t, orig, typ)} {
				// A plain flatbuffer ends in zero padding and a string's
				// terminator, which no reader needs: cut before them.
				end := len(bytes.TrimRight(data, "\x00")) - 1
				for _, cut := range []int{0, 10, headerLen, headerLen + 4, len(data) / 2, end - 8, end} {
					if cut < 0 || cut >= len(data) {
						continue
					}
					src.Set(ctx, k, data[:cut])
					err := readAll(ctx, src)
					if err == nil {
						t.Errorf("%s/%s cut at %d of %d: read without error", name, k, cut, len(data))
					}
					if errors.Is(err, store.ErrNotFound) {
						t.Errorf("%s/%s cut at %d: %v looks like a missing key", name, k, cut, err)
					}
				}
			}
			src.Set(ctx, k, orig)
		}
		if err := readAll(ctx, src); err != nil {
			t.Fatalf("%s restored: %v", name, err)
		}
	}
}

// TestDangling: refs pointing nowhere are clear errors, never fill values.
func TestDangling(t *testing.T) {
	ctx := context.Background()
	for _, name := range []string{"spec1", "spec2"} {
		for _, prefix := range []string{"chunks/", "manifests/"} {
			src := loadRepoFiles(t, name)
			keys := arraytest.Keys(t, src, prefix)
			if len(keys) == 0 {
				t.Fatalf("%s: no %s", name, prefix)
			}
			for _, k := range keys {
				src.Delete(ctx, k)
			}
			err := readAll(ctx, src)
			if !errors.Is(err, ErrCorrupt) {
				t.Errorf("%s without %s: %v, want ErrCorrupt", name, prefix, err)
			}
		}
		// a chunk file shorter than its ref
		src := loadRepoFiles(t, name)
		for _, k := range arraytest.Keys(t, src, "chunks/") {
			b, _ := src.Get(ctx, k, store.Full())
			src.Set(ctx, k, b[:len(b)/2])
		}
		if err := readAll(ctx, src); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s with short chunk files: %v, want ErrCorrupt", name, err)
		}
	}
	// a spec 1 branch naming a snapshot that does not exist
	src := loadRepoFiles(t, "spec1")
	src.Set(ctx, "refs/branch.main/ref.json", []byte(`{"snapshot":"AAAAAAAAAAAAAAAAAAA0"}`))
	if err := readAll(ctx, src); !errors.Is(err, ErrRefNotFound) {
		t.Errorf("branch to a missing snapshot: %v, want ErrRefNotFound", err)
	}
}

// snapshotWithSplit returns a spec 2 snapshot (plain) and the node of an
// array with more than one manifest.
func snapshotWithSplit(t *testing.T, src *mem.Store) (string, []byte, *snapshot, *node) {
	ctx := context.Background()
	for _, k := range arraytest.Keys(t, src, "snapshots/") {
		data, _ := src.Get(ctx, k, store.Full())
		p := plain(t, data, fileSnapshot)
		id, _ := ParseID(k[len("snapshots/"):])
		s, err := parseSnapshot(id, p, 1<<30)
		if err != nil {
			t.Fatal(err)
		}
		for i := range s.nodes {
			if len(s.nodes[i].manifests) > 1 {
				return k, p, s, &s.nodes[i]
			}
		}
	}
	t.Fatal("no array with split manifests")
	return "", nil, nil, nil
}

func TestOverlappingExtents(t *testing.T) {
	ctx := context.Background()
	src := loadRepoFiles(t, "spec2")
	k, p, s, n := snapshotWithSplit(t, src)
	// make manifest 1's extents equal manifest 0's, in the file's bytes
	m0 := extentBytes(t, s, n.path, 0)
	m1 := extentBytes(t, s, n.path, 1)
	copy(p[headerLen+m1:headerLen+m1+8*len(n.shape)], p[headerLen+m0:headerLen+m0+8*len(n.shape)])
	src.Set(ctx, k, p)
	id, _ := ParseID(k[len("snapshots/"):])
	_, err := parseSnapshot(id, p, 1<<30)
	if !errors.Is(err, ErrCorrupt) || !bytes.Contains([]byte(err.Error()), []byte("overlapping")) {
		t.Errorf("overlapping extents: %v", err)
	}
}

// extentBytes returns the offset in the snapshot buffer of the extents of
// manifest j of the array at path.
func extentBytes(t *testing.T, s *snapshot, path string, j int) int {
	root, _ := fbRoot(s.buf)
	nodes, _ := root.vector(snNodes, 4, true)
	for i := 0; i < nodes.n; i++ {
		nt, _ := nodes.table(i)
		if p, _ := nt.str(nsPath, true); p != path {
			continue
		}
		data, _, _ := nt.table(nsData, true)
		mans, _ := data.vector(adManifests, 4, true)
		mt, _ := mans.table(j)
		ext, _ := mt.vector(1, 8, true)
		return ext.start
	}
	t.Fatal("no such node")
	return 0
}

// TestHugeRefCount sets a manifest's refs vector length to 2^40 (and
// 2^32-1): refused, with bounded memory.
func TestHugeRefCount(t *testing.T) {
	ctx := context.Background()
	src := loadRepoFiles(t, "spec2")
	k := arraytest.Keys(t, src, "manifests/")[0]
	data, _ := src.Get(ctx, k, store.Full())
	p := plain(t, data, fileManifest)
	buf := p[headerLen:]
	root, _ := fbRoot(buf)
	arrays, _ := root.vector(1, 4, true)
	at, _ := arrays.table(0)
	refsPos, _, _ := at.ref(1)
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	for _, n := range []uint32{1<<32 - 1, 1 << 30} { // 2^40 does not fit the u32 length: the largest does
		binary.LittleEndian.PutUint32(buf[refsPos:], n)
		id, _ := ParseID(k[len("manifests/"):])
		if _, err := parseManifest(id, p, 1<<30); !errors.Is(err, ErrCorrupt) {
			t.Errorf("refs length %d: %v, want ErrCorrupt", n, err)
		}
	}
	// the arrays vector too, and the count a snapshot states
	binary.LittleEndian.PutUint32(buf[arrays.start-4:], 1<<31)
	id, _ := ParseID(k[len("manifests/"):])
	if _, err := parseManifest(id, p, 1<<30); !errors.Is(err, ErrCorrupt) {
		t.Errorf("arrays length 2^31: %v, want ErrCorrupt", err)
	}
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 64<<20 {
		t.Errorf("allocated %d bytes refusing huge counts", grew)
	}
}

// TestHostileConfigYAML: a spec 1 config.yaml of nested aliases (a
// billion laughs) is read without expanding them, a huge one is
// ErrTooLarge, broken YAML is ErrCorrupt.
func TestHostileConfigYAML(t *testing.T) {
	var b strings.Builder
	b.WriteString("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i < 30; i++ {
		fmt.Fprintf(&b, "a%d: &a%d [", i, i)
		for j := range 10 {
			if j > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "*a%d", i-1)
		}
		b.WriteString("]\n")
	}
	b.WriteString("virtual_chunk_containers: {p: {name: *a29, url_prefix: u}, q: {name: n, url_prefix: 'http://h/'}}\n")
	m, err := decodeConfigYAML([]byte(b.String()))
	if err != nil || len(m) != 1 || m["n"] != "http://h/" {
		t.Errorf("laughs: %v %v", m, err)
	}
	if _, err := decodeConfigYAML(make([]byte, maxConfigYAML+1)); !errors.Is(err, ErrTooLarge) {
		t.Errorf("a huge config.yaml: %v", err)
	}
	if _, err := decodeConfigYAML([]byte("a: [\n")); !errors.Is(err, ErrCorrupt) {
		t.Errorf("broken YAML: %v", err)
	}
}

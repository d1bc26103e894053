package icechunk

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/internal/arraytest"
	"github.com/gozarr/gozarr/store/mem"
	"github.com/gozarr/gozarr/zarr"
)

// The fuzz targets run each parser on arbitrary bytes and then read all
// the parsed value holds: errors are fine, panics and hangs are not. Seeds:
// the fixtures' files, compressed as written and with plain payloads (so
// mutations reach the flatbuffers), plus testdata/fuzz/FuzzXxx (written by
// TestWriteCorpus with ICECHUNK_WRITE_CORPUS=1).

func addSeeds(f *testing.F, prefix string, typ uint8) {
	for _, name := range []string{"spec1", "spec2"} {
		src := loadRepoFiles(f, name)
		for _, k := range arraytest.Keys(f, src, prefix) {
			b, _ := src.Get(context.Background(), k, store.Full())
			f.Add(b)
			f.Add(plain(f, b, typ))
		}
	}
}

// selfID reads the id a file states, so the parser's id check passes.
func selfID(data []byte, typ uint8) ID {
	var id ID
	if _, buf, err := decodeFile(data, typ, 1<<20); err == nil {
		if root, err := fbRoot(buf); err == nil {
			if b, err := root.inline(0, 12); err == nil && b != nil {
				copy(id[:], b)
			}
		}
	}
	return id
}

func FuzzSnapshot(f *testing.F) {
	addSeeds(f, "snapshots/", fileSnapshot)
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := parseSnapshot(selfID(data, fileSnapshot), data, 1<<20)
		if err != nil {
			return
		}
		metadataMap(s.metadata, s.spec)
		for _, n := range s.nodes {
			if s.find(n.path) == nil {
				t.Fatalf("node %q not found", n.path)
			}
		}
		snap := &Snapshot{repo: &Repository{src: failStore{}, cache: newObjCache(1 << 20), opts: options{maxObject: 1 << 20}}, snap: s}
		for _, n := range s.nodes {
			p := n.path[1:]
			if p != "" {
				p += "/"
			}
			snap.Get(context.Background(), p+"zarr.json", store.Full())
			snap.Get(context.Background(), p+"c/0/0", store.Full())
		}
	})
}

// failStore has no keys.
type failStore struct{}

func (failStore) Get(_ context.Context, key string, _ store.ByteRange) ([]byte, error) {
	return nil, &store.KeyError{Op: "get", Key: key, Err: store.ErrNotFound}
}

func FuzzManifest(f *testing.F) {
	addSeeds(f, "manifests/", fileManifest)
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := parseManifest(selfID(data, fileManifest), data, 1<<20)
		if err != nil {
			return
		}
		if m.compact == nil {
			// small inputs keep their flatbuffer: make columns anyway, so
			// that they are fuzzed too
			if c, ok, err := compactRefs(m, 1<<22); err == nil && ok {
				m.compact, m.buf, m.arrays = c, nil, fbVector{}
			}
		}
		for _, node := range m.nodeIDs() {
			var all [][]uint32
			var refs []chunkRef
			m.eachRef(node, func(c []uint32, r chunkRef) error {
				all = append(all, slices.Clone(c))
				refs = append(refs, r)
				return nil
			})
			for i, c := range all {
				r, ok, err := m.lookup(node, c)
				if m.compact != nil && (!ok || err != nil || r.kind != refs[i].kind || r.chunkID != refs[i].chunkID || r.length != refs[i].length) {
					t.Fatalf("ref %v listed as %+v, looked up as %+v %v %v", c, refs[i], r, ok, err)
				}
			}
			m.lookup(node, []uint32{0, 0})
		}
	})
}

func FuzzRepoInfo(f *testing.F) {
	addSeeds(f, "repo", fileRepoInfo)
	f.Fuzz(func(t *testing.T, data []byte) {
		ri, err := parseRepoInfo(data, 1<<20)
		if err != nil {
			return
		}
		r := &Repository{spec: 2, info: ri, src: failStore{}, cache: newObjCache(1 << 20)}
		ctx := context.Background()
		for _, ref := range append(append([]namedRef{}, ri.branches...), ri.tags...) {
			if _, err := r.Resolve(ctx, ref.name); err != nil {
				t.Fatalf("ref %q listed but not resolved: %v", ref.name, err)
			}
		}
		for _, si := range ri.snapshots {
			r.Info(ctx, si.ID)
			if _, err := r.Ancestry(ctx, si.ID); err != nil {
				_ = err // cycles are reported, not followed
			}
		}
	})
}

func FuzzFlex(f *testing.F) {
	f.Add([]byte{0x01, 0x04, 0x01})     // int 1
	f.Add([]byte("hi\x00\x02\x14\x01")) // a string, roughly
	f.Fuzz(func(t *testing.T, data []byte) { decodeFlex(data) })
}

func FuzzMsgpack(f *testing.F) {
	f.Add([]byte{0x81, 0xa1, 'a', 0x01})
	f.Add([]byte{0xdd, 0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, data []byte) { decodeMsgpack(data) })
}

// TestWriteCorpus writes the plain fixture files as checked-in seed
// corpora, when ICECHUNK_WRITE_CORPUS is set.
func TestWriteCorpus(t *testing.T) {
	if os.Getenv("ICECHUNK_WRITE_CORPUS") == "" {
		t.Skip("set ICECHUNK_WRITE_CORPUS=1 to rewrite testdata/fuzz")
	}
	for _, c := range []struct {
		fuzz, prefix string
		typ          uint8
	}{{"FuzzSnapshot", "snapshots/", fileSnapshot}, {"FuzzManifest", "manifests/", fileManifest}, {"FuzzRepoInfo", "repo", fileRepoInfo}} {
		dir := filepath.Join("testdata", "fuzz", c.fuzz)
		os.MkdirAll(dir, 0o755)
		src := loadRepoFiles(t, "spec2")
		for i, k := range arraytest.Keys(t, src, c.prefix) {
			if i >= 3 {
				break
			}
			b, _ := src.Get(context.Background(), k, store.Full())
			body := "go test fuzz v1\n[]byte(" + strconv.Quote(string(plain(t, b, c.typ))) + ")\n"
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("plain%d", i)), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// FuzzImportChanges: a document of changes to import (as a worker's
// ExportChanges makes it) is parsed, checked and merged or refused, never
// a panic; a refused import changes nothing in the session.
func FuzzImportChanges(f *testing.F) {
	ctx := context.Background()
	r, err := Create(ctx, mem.New())
	if err != nil {
		f.Fatal(err)
	}
	s, err := r.Session(ctx, "main")
	if err != nil {
		f.Fatal(err)
	}
	meta, err := zarr.NewArrayMetadata([]int{4, 4}, dtype.TypeUint8, []int{2, 2})
	if err != nil {
		f.Fatal(err)
	}
	if _, err := zarr.CreateArray(ctx, s, "a", meta); err != nil {
		f.Fatal(err)
	}
	base, err := s.Commit(ctx, "a", nil)
	if err != nil {
		f.Fatal(err)
	}
	w, err := r.SessionAt(ctx, "main", base, WithInlineThreshold(2))
	if err != nil {
		f.Fatal(err)
	}
	for i, v := range [][]byte{{1, 2, 3, 4}, {5}} {
		if err := w.Set(ctx, fmt.Sprintf("a/c/%d/0", i), v); err != nil {
			f.Fatal(err)
		}
	}
	w.Delete(ctx, "a/c/1/1")
	doc, err := w.ExportChanges()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(doc)
	f.Add([]byte(`{"base":"` + base.String() + `","refs":[{"path":"/a","coords":[0,1],"kind":"virtual","location":"vcc://x/../y"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := r.SessionAt(ctx, "main", base)
		if err != nil {
			t.Fatal(err)
		}
		if err := m.ImportChanges(data); err != nil {
			if len(m.changes) != 0 {
				t.Fatalf("a refused import changed the session: %v", err)
			}
			return
		}
		if _, err := m.ExportChanges(); err != nil {
			t.Fatalf("an imported document cannot be exported again: %v", err)
		}
	})
}

// FuzzConfigYAML parses spec 1 config.yaml files (seeds: upstream's and
// the one gozarr writes).
func FuzzConfigYAML(f *testing.F) {
	for _, name := range []string{"test-repo-v1", "split-repo-v1"} {
		b, err := os.ReadFile(filepath.Join("../../testdata/icechunk/upstream", name, "config.yaml"))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	b, err := encodeConfigYAML([]Container{{Name: "web", URLPrefix: "https://example.com/d/"}, {URLPrefix: "s3://b/p/", S3Region: "r"}})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add([]byte("a: &x [*x, *x]\nvirtual_chunk_containers: {k: {name: *x, url_prefix: u}}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := decodeConfigYAML(data)
		if err != nil && m != nil {
			t.Fatalf("containers %v with error %v", m, err)
		}
	})
}

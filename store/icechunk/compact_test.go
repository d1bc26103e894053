package icechunk

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/mem"
	"github.com/gozarr/gozarr/zarr"
)

// TestCompactAgrees: every manifest the official core wrote (both specs;
// native and inline refs, split manifests) held as columns lists the same
// refs, in the same order, and looks up the same refs (and the same
// misses) as its flatbuffer.
func TestCompactAgrees(t *testing.T) {
	n := 0
	for _, spec := range []string{"spec1", "spec2"} {
		dir := filepath.Join("../../testdata/icechunk", spec, "manifests")
		ents, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			data, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			id, err := ParseID(e.Name())
			if err != nil {
				t.Fatal(err)
			}
			fb, err := parseManifestFB(id, data, 1<<20)
			if err != nil {
				t.Fatal(err)
			}
			// these manifests are small (two refs each), so parseManifest
			// keeps their flatbuffers: columns are made with a budget
			m, err := parseManifestFB(id, data, 1<<20)
			if err != nil {
				t.Fatal(err)
			}
			c, ok, err := compactRefs(m, 1<<20)
			if err != nil || !ok {
				t.Fatalf("%s/%s: not held as columns: %v", spec, e.Name(), err)
			}
			m.compact, m.buf, m.arrays = c, nil, fbVector{}
			for _, node := range fb.nodeIDs() {
				type item struct {
					c []uint32
					r chunkRef
				}
				list := func(m *manifest) []item {
					var out []item
					if err := m.eachRef(node, func(c []uint32, r chunkRef) error {
						out = append(out, item{append([]uint32(nil), c...), r})
						return nil
					}); err != nil {
						t.Fatal(err)
					}
					return out
				}
				a, b := list(fb), list(m)
				if len(a) != len(b) || len(a) == 0 {
					t.Fatalf("%s/%s: %d refs as columns, %d in the flatbuffer", spec, e.Name(), len(b), len(a))
				}
				for i := range a {
					if !sameChunkRef(a[i].r, b[i].r) || string(coordsKey(a[i].c)) != string(coordsKey(b[i].c)) {
						t.Errorf("%s/%s ref %d: %v %+v as columns, %v %+v in the flatbuffer", spec, e.Name(), i, b[i].c, b[i].r, a[i].c, a[i].r)
					}
					n++
				}
				// lookups around every ref: hits and misses agree
				for _, it := range a {
					for d := range it.c {
						for _, delta := range []int{-1, 0, 1} {
							c := append([]uint32(nil), it.c...)
							c[d] = uint32(int(c[d]) + delta)
							r1, ok1, err1 := fb.lookup(node, c)
							r2, ok2, err2 := m.lookup(node, c)
							if ok1 != ok2 || err1 != nil || err2 != nil || ok1 && !sameChunkRef(r1, r2) {
								t.Errorf("%s/%s lookup %v: %v %+v as columns, %v %+v in the flatbuffer", spec, e.Name(), c, ok2, r2, ok1, r1)
							}
						}
					}
				}
			}
			p, err := parseManifest(id, data, 1<<20)
			if err != nil {
				t.Fatal(err)
			}
			if p.size() > int64(len(fb.buf)) {
				t.Errorf("%s/%s: parsed, holds %d bytes, the flatbuffer %d", spec, e.Name(), p.size(), len(fb.buf))
			}
		}
	}
	if n == 0 {
		t.Fatal("no refs compared")
	}
}

func sameChunkRef(a, b chunkRef) bool {
	return a.kind == b.kind && string(a.inline) == string(b.inline) && a.offset == b.offset && a.length == b.length && a.chunkID == b.chunkID
}

// TestBytesPerNativeRef: a manifest of 40,000 native refs (a 200×200 grid
// of one-byte chunks, inline threshold 0) held by the cache costs at most
// 32 bytes per ref, and its chunks read back.
func TestBytesPerNativeRef(t *testing.T) {
	ctx := context.Background()
	st := mem.New()
	r, err := Create(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	s, err := r.Session(ctx, "main", WithInlineThreshold(0))
	if err != nil {
		t.Fatal(err)
	}
	meta, err := zarr.NewArrayMetadata([]int{200, 200}, dtype.TypeUint8, []int{1, 1})
	if err != nil {
		t.Fatal(err)
	}
	a, err := zarr.CreateArray(ctx, s, "a", meta)
	if err != nil {
		t.Fatal(err)
	}
	data := make([]byte, 200*200)
	for i := range data {
		data[i] = byte(i%251 + 1)
	}
	if err := a.WriteBytes(ctx, data); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Commit(ctx, "native", nil); err != nil {
		t.Fatal(err)
	}
	r2, err := Open(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := r2.CheckoutRef(ctx, "main")
	if err != nil {
		t.Fatal(err)
	}
	got, err := snap.Get(ctx, "a/c/123/45", store.Full())
	if err != nil || len(got) != 1 || got[0] != data[123*200+45] {
		t.Fatalf("chunk (123, 45): %v %v, want %d", got, err, data[123*200+45])
	}
	cs := r2.CacheStats()
	if cs.ChunkRefs != 200*200 {
		t.Fatalf("%d refs held, want %d", cs.ChunkRefs, 200*200)
	}
	if bpr := cs.BytesPerRef(); bpr > 32 {
		t.Errorf("%.1f bytes per native ref held, want at most 32", bpr)
	} else {
		t.Logf("%.1f bytes per native ref held (%d bytes, %d refs, snapshot included)", bpr, cs.Bytes, cs.ChunkRefs)
	}
}

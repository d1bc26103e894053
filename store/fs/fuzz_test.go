package fs_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/fs"
	"github.com/gozarr/gozarr/store/mem"
	"github.com/gozarr/gozarr/store/storetest"
)

// opReader decodes fuzz input into store operations.
type opReader struct{ b []byte }

func (r *opReader) next() byte {
	if len(r.b) == 0 {
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

// keyAlphabet makes hostile and conflicting keys likely: "a" and "a/b",
// "..", "a//b", backslashes and NULs.
const keyAlphabet = "ab/./\\\x00c"

func (r *opReader) key() string {
	n := int(r.next() % 7)
	k := make([]byte, n)
	for i := range k {
		k[i] = keyAlphabet[r.next()%byte(len(keyAlphabet))]
	}
	return string(k)
}

func (r *opReader) byteRange() store.ByteRange {
	kind, a, b := r.next(), int64(r.next()%24)-2, int64(r.next()%24)-2
	return storetest.FuzzRange(kind, a, b)
}

// class names the sentinel an error wraps, for comparing two stores.
func class(err error) string {
	for _, s := range []error{store.ErrNotFound, store.ErrInvalidKey, store.ErrInvalidRange, store.ErrReadOnly} {
		if errors.Is(err, s) {
			return s.Error()
		}
	}
	if err != nil {
		return "other"
	}
	return "ok"
}

func list(s store.Lister, prefix string) ([]string, string) {
	var keys []string
	for k, err := range s.List(context.Background(), prefix) {
		if err != nil {
			return keys, class(err)
		}
		keys = append(keys, k)
	}
	return keys, "ok"
}

// FuzzOps applies a sequence of operations to a filesystem store and to an
// in-memory store and checks that they agree, and that nothing is ever
// written outside the filesystem store's root. Sets that the filesystem
// cannot hold ("a/b" when "a" is a value) are skipped on the memory store.
func FuzzOps(f *testing.F) {
	f.Add([]byte{0, 1, 0, 3, 1, 0, 2, 0, 3, 1, 0, 4, 3, 1})
	f.Add([]byte{0, 3, 0, 2, 0, 4, 0, 0, 2, 3, 0, 2, 0, 1, 4, 5})
	f.Add([]byte{0, 2, 3, 3, 5, 1, 2, 1, 2, 3, 3, 6, 3, 1, 0})
	f.Add([]byte{0, 3, 0, 2, 1, 3, 0, 3, 0, 2, 0, 1, 1, 3, 0, 2, 1, 2, 3, 1, 0})
	f.Add([]byte("\x00\x06\x01\x02\x03\x02\x04\x05\x08\x03\x02\x01\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		ctx := context.Background()
		parent := t.TempDir()
		root := filepath.Join(parent, "root")
		if err := os.Mkdir(root, 0o777); err != nil {
			t.Fatal(err)
		}
		fsys, err := fs.New(root)
		if err != nil {
			t.Fatal(err)
		}
		defer fsys.Close() // each run's store holds its root open
		m := mem.New()
		r := &opReader{data}
		for step := 0; len(r.b) > 0 && step < 64; step++ {
			switch op := r.next() % 5; op {
			case 0: // Set
				k := r.key()
				v := bytes.Repeat([]byte{byte(step)}, int(r.next()%16))
				ef := fsys.Set(ctx, k, v)
				if ef != nil && !errors.Is(ef, store.ErrInvalidKey) {
					continue // "a" vs "a/b": the filesystem cannot hold both
				}
				if em := m.Set(ctx, k, v); class(ef) != class(em) {
					t.Fatalf("step %d Set(%q): fs %v, mem %v", step, k, ef, em)
				}
			case 1: // Delete
				k := r.key()
				ef, em := fsys.Delete(ctx, k), m.Delete(ctx, k)
				if class(ef) != class(em) {
					t.Fatalf("step %d Delete(%q): fs %v, mem %v", step, k, ef, em)
				}
			case 2: // Get
				k, br := r.key(), r.byteRange()
				bf, ef := fsys.Get(ctx, k, br)
				bm, em := m.Get(ctx, k, br)
				if class(ef) != class(em) || !bytes.Equal(bf, bm) || (ef == nil) != (bf != nil) {
					t.Fatalf("step %d Get(%q, %v): fs %q, %v; mem %q, %v", step, k, br, bf, ef, bm, em)
				}
			case 3: // List
				p := r.key()
				kf, cf := list(fsys, p)
				km, cm := list(m, p)
				if cf != cm || !slices.Equal(kf, km) {
					t.Fatalf("step %d List(%q): fs %q, %s; mem %q, %s", step, p, kf, cf, km, cm)
				}
			case 4: // ListDir
				p := r.key()
				kf, df, ef := fsys.ListDir(ctx, p)
				km, dm, em := m.ListDir(ctx, p)
				if class(ef) != class(em) || !slices.Equal(kf, km) || !slices.Equal(df, dm) {
					t.Fatalf("step %d ListDir(%q): fs %q %q %v; mem %q %q %v", step, p, kf, df, ef, km, dm, em)
				}
			}
		}
		entries, err := os.ReadDir(parent)
		if err != nil || len(entries) != 1 || entries[0].Name() != "root" {
			t.Fatalf("something was written next to the root: %v %v", entries, err)
		}
		all, c := list(fsys, "")
		for _, k := range all {
			b, err := fsys.Get(ctx, k, store.Full())
			if want, _ := m.Get(ctx, k, store.Full()); err != nil || !bytes.Equal(b, want) {
				t.Fatalf("listed key %q: fs %q, %v; mem %q", k, b, err, want)
			}
		}
		if want, _ := list(m, ""); c != "ok" || !slices.Equal(all, want) {
			t.Fatalf("final keys: fs %q (%s), mem %q", all, c, want)
		}
	})
}

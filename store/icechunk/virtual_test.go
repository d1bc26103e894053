package icechunk_test

import (
	"context"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/fs"
	"github.com/gozarr/gozarr/store/icechunk"
	"github.com/gozarr/gozarr/store/mem"
	"github.com/gozarr/gozarr/store/virtual"
	"github.com/gozarr/gozarr/zarr"
)

// TestVirtualRefs reads the virtual refs the core's native build wrote
// (make_virtual.mjs) through store/virtual, s3://gozarr-virtual mapped onto
// testdata/icechunk/virtual-data.
func TestVirtualRefs(t *testing.T) {
	ctx := context.Background()
	data := filepath.Join(fixtures, "virtual-data")
	opener := func(ctx context.Context, location string) (store.Reader, error) {
		if location != "s3://gozarr-virtual" {
			t.Errorf("opened %q", location)
		}
		return fs.New(data, fs.ReadOnly())
	}
	read := func(opts ...virtual.Option) ([]byte, error) {
		var o []icechunk.Option
		if opts != nil {
			res, err := virtual.New(append(opts, virtual.WithOpener(opener))...)
			if err != nil {
				t.Fatal(err)
			}
			o = append(o, icechunk.WithVirtual(res))
		}
		r := openRepo(t, filepath.Join(fixtures, "virtual"), o...)
		snap, err := r.CheckoutRef(ctx, "main")
		if err != nil {
			t.Fatal(err)
		}
		a, err := zarr.OpenArray(ctx, snap, "virt")
		if err != nil {
			t.Fatal(err)
		}
		b, _, err := a.ReadBytes(ctx)
		return b, err
	}
	got, err := read(virtual.Allow("s3://gozarr-virtual"))
	if err != nil {
		t.Fatal(err)
	}
	want := []int32{0, 1, 2, 3, 4, 5, 6, 7, 100, 101, 102, 103}
	for i, w := range want {
		if v := int32(binary.LittleEndian.Uint32(got[4*i:])); v != w {
			t.Errorf("virt[%d] = %d, want %d", i, v, w)
		}
	}
	if _, err := read(); !errors.Is(err, icechunk.ErrVirtual) {
		t.Errorf("without a resolver: %v, want ErrVirtual", err)
	}
	if _, err := read(virtual.Allow("s3://other-bucket")); !errors.Is(err, virtual.ErrNotAllowed) {
		t.Errorf("outside the allowed prefixes: %v, want ErrNotAllowed", err)
	}
	// the refs record an ETag and a time that a filesystem cannot check
	if _, err := read(virtual.Allow("s3://gozarr-virtual"), virtual.StrictChecksums()); !errors.Is(err, virtual.ErrUnverifiable) {
		t.Errorf("strict checksums on a store that cannot check them: %v, want ErrUnverifiable", err)
	}
}

// condStore is a target store that checks read conditions as S3 does
// (If-Match on the ETag, If-Unmodified-Since on the time) and records
// them.
type condStore struct {
	store.Reader
	mu       sync.Mutex
	etag     string
	modified time.Time
	seen     []virtual.Checksum
}

func (c *condStore) GetIf(ctx context.Context, key string, r store.ByteRange, cs virtual.Checksum) ([]byte, error) {
	c.mu.Lock()
	c.seen = append(c.seen, cs)
	changed := cs.ETag != "" && cs.ETag != c.etag || !cs.LastModified.IsZero() && c.modified.After(cs.LastModified)
	c.mu.Unlock()
	if changed {
		return nil, &store.KeyError{Op: "get", Key: key, Err: virtual.ErrChanged}
	}
	return c.Reader.Get(ctx, key, r)
}

// TestVirtualContainers: virtual refs gozarr writes (SetVirtual) into
// vcc://data/... locations and an absolute URL, committed in spec 1 and 2,
// read through WithContainers onto a local directory within the
// resolver's allow-list; the recorded ETag and modification time reach
// the target store as the read's condition, and a changed target is
// ErrChanged naming the object. Unknown containers, paths leaving the
// container and prefixes outside the allow-list are refused.
func TestVirtualContainers(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	if err := os.MkdirAll(data, 0o755); err != nil {
		t.Fatal(err)
	}
	blob := make([]byte, 48)
	for i := range 12 {
		binary.LittleEndian.PutUint32(blob[4*i:], uint32(1000+i))
	}
	if err := os.WriteFile(filepath.Join(data, "blob.bin"), blob, 0o644); err != nil {
		t.Fatal(err)
	}
	when := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	for _, spec := range []int{1, 2} {
		st := mem.New()
		r, err := icechunk.Create(ctx, st, icechunk.WithSpecVersion(spec))
		if err != nil {
			t.Fatal(err)
		}
		s, err := r.Session(ctx, "main")
		if err != nil {
			t.Fatal(err)
		}
		meta, err := zarr.NewArrayMetadata([]int{12}, dtype.TypeInt32, []int{4})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := zarr.CreateArray(ctx, s, "v", meta); err != nil {
			t.Fatal(err)
		}
		for key, ref := range map[string]virtual.Ref{
			"v/c/0": {URL: "vcc://data/blob.bin", Offset: 0, Length: 16, Checksum: virtual.Checksum{ETag: `"e1"`}},
			"v/c/1": {URL: "vcc://data/blob.bin", Offset: 16, Length: 16, Checksum: virtual.Checksum{LastModified: when}},
			"v/c/2": {URL: "file://" + filepath.ToSlash(data) + "/blob.bin", Offset: 32, Length: 16},
		} {
			if err := s.SetVirtual(ctx, key, ref); err != nil {
				t.Fatal(err)
			}
		}
		for _, bad := range []string{"vcc://data/../secret", "vcc://data/a/%2e%2e/b", "vcc:///x", "vcc://data"} {
			if err := s.SetVirtual(ctx, "v/c/0", virtual.Ref{URL: bad, Length: 4}); !errors.Is(err, icechunk.ErrContainer) {
				t.Errorf("SetVirtual %q: %v, want ErrContainer", bad, err)
			}
		}
		if _, err := s.Commit(ctx, "virtual", nil); err != nil {
			t.Fatal(err)
		}
		target := &condStore{etag: `"e1"`, modified: when}
		fsys, err := fs.New(data, fs.ReadOnly())
		if err != nil {
			t.Fatal(err)
		}
		target.Reader = fsys
		read := func(containers map[string]string, sel ...nd.Item) ([]byte, error) {
			res, err := virtual.New(virtual.Allow(data), virtual.WithOpener(func(ctx context.Context, loc string) (store.Reader, error) {
				return target, nil
			}))
			if err != nil {
				t.Fatal(err)
			}
			r, err := icechunk.Open(ctx, st, icechunk.WithVirtual(res), icechunk.WithContainers(containers))
			if err != nil {
				t.Fatal(err)
			}
			snap, err := r.CheckoutRef(ctx, "main")
			if err != nil {
				t.Fatal(err)
			}
			a, err := zarr.OpenArray(ctx, snap, "v")
			if err != nil {
				t.Fatal(err)
			}
			b, _, err := a.ReadBytes(ctx, sel...)
			return b, err
		}
		got, err := read(map[string]string{"data": data})
		if err != nil {
			t.Fatalf("spec %d: %v", spec, err)
		}
		if string(got) != string(blob) {
			t.Errorf("spec %d: virtual chunks read % x, want % x", spec, got, blob)
		}
		target.mu.Lock()
		seen := slices.Clone(target.seen)
		target.mu.Unlock()
		var etag, mod bool
		for _, c := range seen {
			etag = etag || c.ETag == `"e1"`
			mod = mod || c.LastModified.Equal(when)
		}
		if !etag || !mod {
			t.Errorf("spec %d: conditions the target saw: %v, want the ETag and the time recorded", spec, seen)
		}
		// the target changed: an error naming it, never its new bytes
		target.mu.Lock()
		target.etag, target.modified = `"e2"`, when.Add(time.Hour)
		target.mu.Unlock()
		for _, at := range []int{1, 5} {
			if _, err := read(map[string]string{"data": "file://" + filepath.ToSlash(data) + "/"}, nd.Range(at, at+1)); !errors.Is(err, virtual.ErrChanged) || !strings.Contains(err.Error(), "blob.bin") {
				t.Errorf("spec %d: element %d of a changed target: %v, want ErrChanged naming blob.bin", spec, at, err)
			}
		}
		if _, err := read(nil, nd.Range(0, 1)); !errors.Is(err, icechunk.ErrContainer) || !strings.Contains(err.Error(), `"data"`) {
			t.Errorf("spec %d: no container given: %v, want ErrContainer naming data", spec, err)
		}
		if _, err := read(map[string]string{"data": dir}, nd.Range(0, 1)); !errors.Is(err, virtual.ErrNotAllowed) {
			t.Errorf("spec %d: a container outside the allow-list: %v, want ErrNotAllowed", spec, err)
		}
		// the absolute URL needs no container and no condition
		if got, err := read(nil, nd.Range(8, 12)); err != nil || string(got) != string(blob[32:]) {
			t.Errorf("spec %d: the absolute virtual ref: % x %v", spec, got, err)
		}
	}
}

// TestConfigContainersRefused: Create refuses containers the configuration
// cannot record, before writing anything.
func TestConfigContainersRefused(t *testing.T) {
	ctx := context.Background()
	for _, c := range [][]icechunk.Container{
		{{URLPrefix: "https://example.com/data"}},            // no trailing /
		{{URLPrefix: "gs://bucket/p/"}},                      // an unknown store
		{{URLPrefix: "file://host/dir/"}},                    // not a local path
		{{URLPrefix: "https://u:p@example.com/d/"}},          // user info
		{{URLPrefix: "s3:///p/"}},                            // no bucket
		{{Name: "a/b", URLPrefix: "https://example.com/d/"}}, // a / in the name
		{{Name: "x", URLPrefix: "https://example.com/d/"}, {Name: "x", URLPrefix: "https://example.com/e/"}},
		{{URLPrefix: "https://example.com/d/"}, {URLPrefix: "https://example.com/d/"}},
	} {
		st := mem.New()
		if _, err := icechunk.Create(ctx, st, icechunk.WithConfigContainers(c...)); !errors.Is(err, icechunk.ErrContainer) {
			t.Errorf("%+v: %v, want ErrContainer", c, err)
		}
		for k, err := range st.List(ctx, "") {
			t.Errorf("%+v: the store holds %q (%v)", c, k, err)
		}
	}
}

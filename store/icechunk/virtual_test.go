package icechunk_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/fs"
	"github.com/gozarr/gozarr/store/icechunk"
	"github.com/gozarr/gozarr/store/internal/arraytest"
	"github.com/gozarr/gozarr/store/mem"
	"github.com/gozarr/gozarr/store/s3"
	"github.com/gozarr/gozarr/store/s3/s3test"
	"github.com/gozarr/gozarr/store/storeurl"
	"github.com/gozarr/gozarr/store/virtual"
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
		a := arraytest.Open(t, checkoutRef(t, openRepo(t, filepath.Join(fixtures, "virtual"), o...), "main"), "virt")
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
		s, _ := newArraySession(t, st, "v", dtype.TypeInt32, []int{12}, []int{4}, icechunk.WithSpecVersion(spec))
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
		commit(t, s, "virtual")
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
			a := openMainArray(t, st, "v", icechunk.WithVirtual(res), icechunk.WithContainers(containers))
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

// TestVirtualCoalesced: the virtual chunks of one read that live in one
// file are grouped and joined by the engine (the snapshot is a
// store.Locator): 16 neighbouring chunks of one HTTP object, all with its
// ETag, are one ranged GET carrying If-Match; those of two objects are
// two; a chunk with a different checksum is read apart.
func TestVirtualCoalesced(t *testing.T) {
	ctx := context.Background()
	data := make([]byte, 256)
	for i := range 64 {
		binary.LittleEndian.PutUint32(data[4*i:], uint32(i))
	}
	when := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	var gets atomic.Int64
	var ifMatch atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			gets.Add(1)
			if r.Header.Get("If-Match") != "" {
				ifMatch.Add(1)
			}
		}
		w.Header().Set("ETag", `"e"`)
		http.ServeContent(w, r, "", when, bytes.NewReader(data))
	}))
	defer srv.Close()
	for _, tc := range []struct {
		name       string
		url        func(i int) string
		sum        func(i int) virtual.Checksum
		gets, cond int64
	}{
		{"one file", func(int) string { return srv.URL + "/a.bin" }, func(int) virtual.Checksum { return virtual.Checksum{ETag: `"e"`} }, 1, 1},
		{"two files", func(i int) string { return srv.URL + []string{"/a.bin", "/b.bin"}[i/8] }, func(int) virtual.Checksum { return virtual.Checksum{} }, 2, 0},
		{"one checksum apart", func(int) string { return srv.URL + "/a.bin" }, func(i int) virtual.Checksum {
			if i == 15 {
				return virtual.Checksum{LastModified: when}
			}
			return virtual.Checksum{}
		}, 2, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := mem.New()
			s, _ := newArraySession(t, st, "v", dtype.TypeInt32, []int{64}, []int{4})
			refs := map[string]virtual.Ref{}
			for i := range 16 {
				refs["v/c/"+strconv.Itoa(i)] = virtual.Ref{URL: tc.url(i), Offset: int64(16 * i), Length: 16, Checksum: tc.sum(i)}
			}
			commitVirtual(t, s, refs)
			res, err := virtual.New(virtual.Allow(srv.URL))
			if err != nil {
				t.Fatal(err)
			}
			a := openMainArray(t, st, "v", icechunk.WithVirtual(res))
			gets.Store(0)
			ifMatch.Store(0)
			got, _, err := a.ReadBytes(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, data) { // (both files serve the same bytes)
				t.Errorf("read % x, want % x", got, data)
			}
			if g, c := gets.Load(), ifMatch.Load(); g != tc.gets || c != tc.cond {
				t.Errorf("16 chunks: %d GETs, %d with If-Match; want %d, %d", g, c, tc.gets, tc.cond)
			}
		})
	}
}

// peakStore counts the Gets of chunks/ in flight at once, each held until
// a second one arrives (or briefly), so that concurrent readers overlap.
type peakStore struct {
	store.Store
	mu        sync.Mutex
	now, peak int
	gets      int
}

func (p *peakStore) Get(ctx context.Context, key string, r store.ByteRange) ([]byte, error) {
	if !strings.HasPrefix(key, "chunks/") {
		return p.Store.Get(ctx, key, r)
	}
	p.mu.Lock()
	p.now++
	p.gets++
	p.peak = max(p.peak, p.now)
	p.mu.Unlock()
	time.Sleep(2 * time.Millisecond)
	p.mu.Lock()
	p.now--
	p.mu.Unlock()
	return p.Store.Get(ctx, key, r)
}

// Capabilities: a remote store (no local reads), 64 requests at a time.
func (p *peakStore) Capabilities() store.Capabilities {
	return store.Capabilities{Conditional: p.Store.(store.ConditionalWriter), MaxConcurrency: 64}
}

// TestNativeChunksConcurrent: native chunks, one object each, located by
// the snapshot, are still fetched concurrently on a remote store (not one
// request after another within the engine's batch): 64 chunks, one GET
// each, more than one in flight at a time.
func TestNativeChunksConcurrent(t *testing.T) {
	ctx := context.Background()
	m := mem.New()
	s, a := newArraySession(t, m, "x", dtype.TypeFloat32, []int{256, 256}, []int{32, 32})
	buf := make([]byte, 256*256*4)
	for i := range buf {
		buf[i] = byte(i * 7)
	}
	if err := a.WriteBytes(ctx, buf); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Commit(ctx, "c", nil); err != nil {
		t.Fatal(err)
	}
	ps := &peakStore{Store: m}
	b := openMainArray(t, ps, "x")
	got, _, err := b.ReadBytes(ctx)
	if err != nil || !bytes.Equal(got, buf) {
		t.Fatalf("read: %v (equal %t)", err, bytes.Equal(got, buf))
	}
	if ps.gets != 64 || ps.peak < 2 {
		t.Errorf("64 chunks: %d GETs, at most %d at once; want 64, several", ps.gets, ps.peak)
	}
}

// conditionTarget is an object that virtual refs point to, on a real
// gozarr store.
type conditionTarget struct {
	url     string                     // the object's URL
	put     func(data []byte)          // rewrites it, a second later than before at least
	version func() store.ReadCondition // its current ETag and Last-Modified
	gets    func() []http.Header       // the headers of the ranged GETs it answered
	opts    []virtual.Option           // the resolver's options to reach it
}

// TestVirtualConditions: virtual refs with the target's ETag and with its
// Last-Modified, read end to end through gozarr's S3 store (on the fake
// S3) and HTTP store: each ranged GET carries its ref's If-Match or
// If-Unmodified-Since, the values read are the target's, and once the
// target is rewritten both chunks are an error wrapping virtual.ErrChanged
// naming the object, never the new bytes, while the chunk recorded without
// a checksum reads the new bytes. (gofakes3 ignores the conditions; the
// store checks the answer's validators, so the outcome is the same.)
func TestVirtualConditions(t *testing.T) {
	ctx := context.Background()
	blob := make([]byte, 48)
	for i := range 12 {
		binary.LittleEndian.PutUint32(blob[4*i:], uint32(7000+i))
	}
	targets := map[string]func(t *testing.T) conditionTarget{
		"s3": func(t *testing.T) conditionTarget {
			srv := s3test.NewFake(t, "b")
			rec := s3test.NewRecorder(nil)
			st := srv.Store(t, "data")
			put := func(data []byte) {
				if c, err := st.ReadCondition(ctx, "blob.bin"); err == nil {
					// gofakes3 stamps writes with the clock: rewrite in a later second
					time.Sleep(time.Until(c.LastModified.Truncate(time.Second).Add(time.Second + 50*time.Millisecond)))
				}
				if err := st.Set(ctx, "blob.bin", data); err != nil {
					t.Fatal(err)
				}
			}
			return conditionTarget{
				url: "s3://b/data/blob.bin", put: put,
				version: func() store.ReadCondition {
					c, err := st.ReadCondition(ctx, "blob.bin")
					if err != nil {
						t.Fatal(err)
					}
					return c
				},
				gets: func() []http.Header {
					var out []http.Header
					for _, r := range rec.Requests("GET") {
						out = append(out, r.Header)
					}
					return out
				},
				opts: []virtual.Option{virtual.Allow("s3://b/data"),
					virtual.WithStoreOptions(storeurl.WithS3(srv.Options(s3.WithHTTPClient(rec.Client()))...))},
			}
		},
		"http": func(t *testing.T) conditionTarget {
			obj := &webObject{}
			var mu sync.Mutex
			var gets []http.Header
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodGet {
					mu.Lock()
					gets = append(gets, r.Header.Clone())
					mu.Unlock()
				}
				obj.ServeHTTP(w, r) // http.ServeContent: it evaluates both conditions (412)
			}))
			t.Cleanup(srv.Close)
			n := 0
			return conditionTarget{
				url: srv.URL + "/data/blob.bin",
				put: func(data []byte) {
					n++
					obj.set(data, `"v`+string(rune('0'+n))+`"`, time.Date(2026, 11, 30, 12, n, 0, 0, time.UTC))
				},
				version: func() store.ReadCondition {
					obj.mu.Lock()
					defer obj.mu.Unlock()
					return store.ReadCondition{ETag: obj.etag, LastModified: obj.modified}
				},
				gets: func() []http.Header {
					mu.Lock()
					defer mu.Unlock()
					return gets
				},
				opts: []virtual.Option{virtual.Allow(srv.URL + "/data/")},
			}
		},
	}
	for name, mk := range targets {
		t.Run(name, func(t *testing.T) {
			tg := mk(t)
			tg.put(blob)
			v := tg.version()
			if v.ETag == "" || v.LastModified.IsZero() {
				t.Fatalf("the target's version: %+v", v)
			}
			lm := v.LastModified.UTC().Truncate(time.Second)
			st := mem.New()
			s, _ := newArraySession(t, st, "v", dtype.TypeInt32, []int{12}, []int{4})
			commitVirtual(t, s, map[string]virtual.Ref{
				"v/c/0": {URL: tg.url, Offset: 0, Length: 16, Checksum: virtual.Checksum{ETag: v.ETag}},
				"v/c/1": {URL: tg.url, Offset: 16, Length: 16, Checksum: virtual.Checksum{LastModified: lm}},
				"v/c/2": {URL: tg.url, Offset: 32, Length: 16},
			})
			read := func(sel ...nd.Item) ([]byte, error) {
				res, err := virtual.New(tg.opts...)
				if err != nil {
					t.Fatal(err)
				}
				a := openMainArray(t, st, "v", icechunk.WithVirtual(res))
				b, _, err := a.ReadBytes(ctx, sel...)
				return b, err
			}
			got, err := read()
			if err != nil || !bytes.Equal(got, blob) {
				t.Fatalf("read % x, %v; want % x", got, err, blob)
			}
			sent := map[string][2]string{}
			for _, h := range tg.gets() {
				sent[h.Get("Range")] = [2]string{h.Get("If-Match"), h.Get("If-Unmodified-Since")}
			}
			for rng, want := range map[string][2]string{
				"bytes=0-15":  {v.ETag, ""},
				"bytes=16-31": {"", lm.Add(time.Second).Format(http.TimeFormat)}, // (objstore.UnmodifiedSince)
				"bytes=32-47": {"", ""},
			} {
				if got, ok := sent[rng]; !ok || got != want {
					t.Errorf("GET %s carried If-Match, If-Unmodified-Since %q (sent: %t), want %q", rng, got, ok, want)
				}
			}
			changed := bytes.Repeat([]byte{0x5a}, 48)
			tg.put(changed)
			for _, at := range []int{1, 5} {
				b, err := read(nd.Range(at, at+1))
				if !errors.Is(err, virtual.ErrChanged) || !errors.Is(err, store.ErrChanged) || !strings.Contains(err.Error(), "blob.bin") || b != nil {
					t.Errorf("element %d of the rewritten target: % x %v, want ErrChanged naming blob.bin", at, b, err)
				}
			}
			if b, err := read(nd.Range(8, 12)); err != nil || !bytes.Equal(b, changed[32:]) {
				t.Errorf("the chunk without a checksum: % x %v, want the new bytes", b, err)
			}
		})
	}
}

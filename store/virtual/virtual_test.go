package virtual_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/mem"
	"github.com/gozarr/gozarr/store/virtual"
)

// countingOpener opens memory stores and counts the calls.
type countingOpener struct {
	n      atomic.Int64
	stores map[string]store.Reader
}

func (o *countingOpener) open(_ context.Context, location string) (store.Reader, error) {
	o.n.Add(1)
	if st, ok := o.stores[location]; ok {
		return st, nil
	}
	return nil, fmt.Errorf("no store at %q", location)
}

func memWith(t *testing.T, kv map[string]string) *mem.Store {
	t.Helper()
	st := mem.New()
	for k, v := range kv {
		if err := st.Set(context.Background(), k, []byte(v)); err != nil {
			t.Fatal(err)
		}
	}
	return st
}

func TestBaseAndAllow(t *testing.T) {
	ctx := context.Background()
	base := memWith(t, map[string]string{"refs/data.bin": "0123456789", "refs/sub/x.bin": "abcdef", "secret": "s3cr3t"})
	other := memWith(t, map[string]string{"f.nc": "ABCDEFGHIJ"})
	op := &countingOpener{stores: map[string]store.Reader{"s3://bucket/data": other}}
	r, err := virtual.New(
		virtual.WithBase("/srv/refs", base, "refs/"),
		virtual.Allow("s3://bucket/data"),
		virtual.WithOpener(op.open),
	)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		ref  virtual.Ref
		want string
	}{
		{virtual.Ref{URL: "data.bin", Offset: 2, Length: 3}, "234"},
		{virtual.Ref{URL: "/srv/refs/data.bin", Offset: 0, Length: 4}, "0123"},
		{virtual.Ref{URL: "file:///srv/refs/sub/x.bin", Whole: true}, "abcdef"},
		{virtual.Ref{URL: "/srv/refs/./sub/../data.bin", Offset: 9, Length: 1}, "9"},
		{virtual.Ref{URL: "sub/x.bin", Offset: 1, Length: 2}, "bc"},
		{virtual.Ref{URL: "s3://bucket/data/f.nc", Offset: 5, Length: 5}, "FGHIJ"},
		{virtual.Ref{URL: "S3://bucket/data/f.nc", Offset: 0, Length: 1}, "A"},
	} {
		got, err := r.Get(ctx, c.ref)
		if err != nil {
			t.Errorf("%+v: %v", c.ref, err)
			continue
		}
		if string(got) != c.want {
			t.Errorf("%+v: got %q, want %q", c.ref, got, c.want)
		}
	}
	if n := op.n.Load(); n != 1 {
		t.Errorf("the store of s3://bucket/data was opened %d times, want once", n)
	}
}

// TestRefused checks that every URL outside the allowed prefixes is
// refused with an error naming it, and that no store is opened and no
// request made for it.
func TestRefused(t *testing.T) {
	ctx := context.Background()
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		w.Write([]byte("internal"))
	}))
	defer srv.Close()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "outside.bin"), []byte("outside"), 0o644); err != nil {
		t.Fatal(err)
	}
	refs := filepath.Join(dir, "refs")
	if err := os.Mkdir(refs, 0o755); err != nil {
		t.Fatal(err)
	}
	base := memWith(t, map[string]string{"x": "x"})
	op := &countingOpener{}
	r, err := virtual.New(
		virtual.WithBase(refs, base, ""),
		virtual.Allow("s3://bucket/data", srv.URL+"/public"),
		virtual.WithOpener(op.open),
	)
	if err != nil {
		t.Fatal(err)
	}
	host := strings.TrimPrefix(srv.URL, "http://")
	for _, u := range []string{
		"file:///etc/shadow",
		"/etc/shadow",
		"../outside.bin",
		"sub/../../outside.bin",
		filepath.Join(dir, "outside.bin"),
		refs + "/../outside.bin",
		"file://" + refs + "/%2e%2e/outside.bin",
		"file://otherhost/etc/passwd",
		srv.URL + "/private/x",
		srv.URL + "/public/../private/x",
		srv.URL + "/public/%2e%2e/private/x",
		srv.URL + "/public/a%2F..%2F..%2Fprivate",
		srv.URL + "/publicity/x",
		srv.URL + "/public/x?sig=1",
		srv.URL + "/public/x#frag",
		"http://user:pw@" + host + "/public/x",
		"http://127.0.0.1/x",
		"http://169.254.169.254/latest/meta-data/",
		"https://" + host + "/public/x", // another scheme is another origin
		"s3://other-bucket/data/f.nc",
		"s3://bucket/database.nc",
		"s3://bucket/data/../secret",
		"s3://bucket/data//f.nc",
		"s3://bucket/data/f.nc?versionId=1",
		"gs://bucket/data/f.nc",
		"ftp://host/data/f.nc",
		"memory://x",
		"",
	} {
		_, err := r.Get(ctx, virtual.Ref{URL: u, Offset: 0, Length: 1})
		if err == nil {
			t.Errorf("%q: read, want a refusal", u)
			continue
		}
		if !errors.Is(err, virtual.ErrNotAllowed) && !errors.Is(err, virtual.ErrInvalidRef) {
			t.Errorf("%q: %v, want ErrNotAllowed or ErrInvalidRef", u, err)
		}
		if u != "" && !strings.Contains(err.Error(), fmt.Sprintf("%q", u)) && !strings.Contains(err.Error(), u) {
			t.Errorf("%q: error %q does not name the URL", u, err)
		}
		if err := r.Check(u); err == nil {
			t.Errorf("Check(%q) = nil", u)
		}
		// LocateKey refuses it too, naming the store key
		var ke *store.KeyError
		loc, err := r.LocateKey(ctx, "a/c/0", virtual.Ref{URL: u, Offset: 0, Length: 1})
		if !errors.As(err, &ke) || ke.Key != "a/c/0" || ke.Op != "locate" || !errors.Is(err, virtual.ErrNotAllowed) && !errors.Is(err, virtual.ErrInvalidRef) || loc.Store != nil || loc.Inline != nil {
			t.Errorf("LocateKey %q: %+v %v, want a *store.KeyError naming a/c/0 wrapping the refusal", u, loc, err)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("%d requests reached the server", n)
	}
	if n := op.n.Load(); n != 0 {
		t.Errorf("%d stores opened", n)
	}
}

// TestNoBase: without a base or an allowed prefix nothing resolves.
func TestNoBase(t *testing.T) {
	r, err := virtual.New()
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{"x.nc", "/x.nc", "s3://b/x"} {
		if err := r.Check(u); !errors.Is(err, virtual.ErrNotAllowed) {
			t.Errorf("Check(%q) = %v, want ErrNotAllowed", u, err)
		}
	}
	// A base store with no location: relative URLs only.
	r, err = virtual.New(virtual.WithBase("", mem.New(), "a/"))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Check("x.nc"); err != nil {
		t.Errorf("relative: %v", err)
	}
	for _, u := range []string{"../x.nc", "/a/x.nc", "./x", "x//y"} {
		if err := r.Check(u); !errors.Is(err, virtual.ErrNotAllowed) && !errors.Is(err, virtual.ErrInvalidRef) {
			t.Errorf("Check(%q) = %v, want a refusal", u, err)
		}
	}
}

// TestHTTP reads through the real HTTP store of an allowed prefix on a
// loopback server, and counts requests: GetMany joins neighbouring ranges
// of one object into one request.
func TestHTTP(t *testing.T) {
	ctx := context.Background()
	body := bytes.Repeat([]byte("0123456789"), 100)
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		hits.Add(1)
		if req.URL.Path != "/data/f.bin" {
			http.NotFound(w, req)
			return
		}
		http.ServeContent(w, req, "f.bin", time.Time{}, bytes.NewReader(body))
	}))
	defer srv.Close()
	r, err := virtual.New(virtual.Allow(srv.URL + "/data/"))
	if err != nil {
		t.Fatal(err)
	}
	u := srv.URL + "/data/f.bin"
	refs := []virtual.Ref{{URL: u, Offset: 100, Length: 10}, {URL: u, Offset: 0, Length: 10}, {URL: u, Offset: 50, Length: 20}}
	got, err := r.GetMany(ctx, refs, store.CoalesceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i, ref := range refs {
		if want := body[ref.Offset : ref.Offset+ref.Length]; !bytes.Equal(got[i], want) {
			t.Errorf("ref %d: got %q, want %q", i, got[i], want)
		}
	}
	if n := hits.Load(); n != 1 {
		t.Errorf("%d requests for three neighbouring ranges, want 1", n)
	}
	// A range past the end of the object is an error, not short data.
	if _, err := r.Get(ctx, virtual.Ref{URL: u, Offset: 995, Length: 10}); !errors.Is(err, virtual.ErrInvalidRef) {
		t.Errorf("range past the end: %v, want ErrInvalidRef", err)
	}
	if _, err := r.Get(ctx, virtual.Ref{URL: srv.URL + "/data/missing", Offset: 0, Length: 1}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("missing object: %v, want ErrNotFound", err)
	}
}

func TestInvalidRefs(t *testing.T) {
	r, err := virtual.New(virtual.WithBase("/d", mem.New(), ""))
	if err != nil {
		t.Fatal(err)
	}
	for _, ref := range []virtual.Ref{
		{URL: "x", Offset: -1, Length: 1},
		{URL: "x", Offset: 1, Length: -1},
		{URL: "x", Offset: 1 << 62, Length: 1 << 62},
		{URL: "", Whole: true},
	} {
		if _, err := r.Get(context.Background(), ref); !errors.Is(err, virtual.ErrInvalidRef) {
			t.Errorf("%+v: %v, want ErrInvalidRef", ref, err)
		}
	}
	for _, bad := range []string{"", "ftp://x/y", "file://host/x"} {
		if _, err := virtual.New(virtual.Allow(bad)); err == nil {
			t.Errorf("Allow(%q) accepted", bad)
		}
	}
	if _, err := virtual.New(virtual.WithBase("/d", mem.New(), "noslash")); err == nil {
		t.Error("WithBase with a prefix not ending in / accepted")
	}
}

// condStore is a memory store that checks an ETag.
type condStore struct {
	*mem.Store
	etag  string
	calls atomic.Int64
}

func (s *condStore) GetIf(ctx context.Context, key string, r store.ByteRange, c virtual.Checksum) ([]byte, error) {
	s.calls.Add(1)
	if c.ETag != s.etag {
		return nil, &store.KeyError{Op: "get", Key: key, Err: virtual.ErrChanged}
	}
	return s.Get(ctx, key, r)
}

func TestChecksum(t *testing.T) {
	ctx := context.Background()
	cs := &condStore{Store: memWith(t, map[string]string{"f": "hello"}), etag: `"v1"`}
	op := &countingOpener{stores: map[string]store.Reader{"s3://b/p": cs}}
	r, err := virtual.New(virtual.Allow("s3://b/p"), virtual.WithOpener(op.open))
	if err != nil {
		t.Fatal(err)
	}
	got, err := r.Get(ctx, virtual.Ref{URL: "s3://b/p/f", Offset: 1, Length: 3, Checksum: virtual.Checksum{ETag: `"v1"`}})
	if err != nil || string(got) != "ell" {
		t.Fatalf("matching etag: %q, %v", got, err)
	}
	if _, err := r.Get(ctx, virtual.Ref{URL: "s3://b/p/f", Offset: 1, Length: 3, Checksum: virtual.Checksum{ETag: `"v0"`}}); !errors.Is(err, virtual.ErrChanged) {
		t.Errorf("changed etag: %v, want ErrChanged", err)
	}
	if n := cs.calls.Load(); n != 2 {
		t.Errorf("%d conditional reads, want 2", n)
	}
	// A store that cannot check: read unconditioned, or refused when strict.
	m := memWith(t, map[string]string{"f": "hello"})
	c := virtual.Checksum{ETag: "x"}
	r, _ = virtual.New(virtual.WithBase("/d", m, ""))
	if got, err := r.Get(ctx, virtual.Ref{URL: "f", Whole: true, Checksum: c}); err != nil || string(got) != "hello" {
		t.Errorf("lenient: %q, %v", got, err)
	}
	r, _ = virtual.New(virtual.WithBase("/d", m, ""), virtual.StrictChecksums())
	if _, err := r.Get(ctx, virtual.Ref{URL: "f", Whole: true, Checksum: c}); !errors.Is(err, virtual.ErrUnverifiable) {
		t.Errorf("strict: %v, want ErrUnverifiable", err)
	}
}

// TestAllowFile: AllowFile allows the one file, not its directory's other
// files nor what climbs out of it.
func TestAllowFile(t *testing.T) {
	ctx := context.Background()
	dir := memWith(t, map[string]string{"a.nc": "0123456789", "b.nc": "secret", "a.nc2": "x"})
	op := &countingOpener{stores: map[string]store.Reader{"/data": dir, "s3://bucket/d": dir}}
	r, err := virtual.New(virtual.AllowFile("/data/a.nc", "s3://bucket/d/a.nc"), virtual.WithOpener(op.open))
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{"/data/a.nc", "file:///data/a.nc", "/data/./a.nc", "s3://bucket/d/a.nc"} {
		got, err := r.Get(ctx, virtual.Ref{URL: u, Offset: 2, Length: 3})
		if err != nil || string(got) != "234" {
			t.Errorf("%s: %q %v", u, got, err)
		}
	}
	for _, u := range []string{"/data/b.nc", "/data/a.nc2", "/data/a.nc/x", "/data/", "/data", "/data/sub/../b.nc", "s3://bucket/d/b.nc", "/other/a.nc", "a.nc"} {
		if _, err := r.Get(ctx, virtual.Ref{URL: u, Whole: true}); !errors.Is(err, virtual.ErrNotAllowed) {
			t.Errorf("%s: %v, want ErrNotAllowed", u, err)
		}
	}
	for _, bad := range []string{"", "/", "s3://bucket", "s3://bucket/", "/data/.."} {
		if _, err := virtual.New(virtual.AllowFile(bad)); err == nil {
			t.Errorf("AllowFile(%q) accepted", bad)
		}
	}
	if got := r.Allowed(); len(got) != 2 || got[0] != "file:///data/a.nc" {
		t.Errorf("Allowed() = %q", got)
	}
}

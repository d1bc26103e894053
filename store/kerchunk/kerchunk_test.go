package kerchunk_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
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
	"github.com/gozarr/gozarr/store/kerchunk"
	"github.com/gozarr/gozarr/store/mem"
	"github.com/gozarr/gozarr/store/virtual"
	"github.com/gozarr/gozarr/zarr"
)

// memRefs puts doc at "refs.json" of a new memory store, with the files
// (key → contents) beside it.
func memRefs(t testing.TB, doc string, files map[string][]byte) *mem.Store {
	t.Helper()
	st := mem.New()
	ctx := context.Background()
	if err := st.Set(ctx, "refs.json", []byte(doc)); err != nil {
		t.Fatal(err)
	}
	for k, v := range files {
		if err := st.Set(ctx, k, v); err != nil {
			t.Fatal(err)
		}
	}
	return st
}

func get(t *testing.T, ks *kerchunk.Store, key string) string {
	t.Helper()
	b, err := ks.Get(context.Background(), key, store.Full())
	if err != nil {
		t.Fatalf("%s: %v", key, err)
	}
	return string(b)
}

// TestSpecExample is the version 1 example of kerchunk's spec, with its
// expansion to version 0 as the spec gives it.
func TestSpecExample(t *testing.T) {
	doc := `{
	  "version": 1,
	  "templates": {"u": "server.domain/path", "f": "{{c}}"},
	  "gen": [{"key": "gen_key{{i}}", "url": "http://{{u}}_{{i}}", "offset": "{{(i + 1) * 1000}}", "length": "1000",
	           "dimensions": {"i": {"stop": 5}}}],
	  "refs": {"key0": "data", "key1": ["http://target_url", 10000, 100], "key2": ["http://{{u}}", 10000, 100],
	           "key3": ["http://{{f(c='text')}}", 10000, 100]}
	}`
	var locs []string
	op := func(_ context.Context, location string) (store.Reader, error) {
		locs = append(locs, location)
		return mem.New(), nil
	}
	ks, err := kerchunk.Open(context.Background(), memRefs(t, doc, nil), "refs.json",
		kerchunk.Allow("http://target_url", "http://server.domain", "http://text"),
		kerchunk.WithResolverOptions(virtual.WithOpener(op)))
	if err != nil {
		t.Fatal(err)
	}
	if got := get(t, ks, "key0"); got != "data" {
		t.Errorf("key0 = %q", got)
	}
	want := map[string]string{
		"key1": "http://target_url 10000 100", "key2": "http://server.domain/path 10000 100",
		"key3": "http://text 10000 100",
	}
	for i := range 5 {
		want[fmt.Sprintf("gen_key%d", i)] = fmt.Sprintf("http://server.domain/path_%d %d 1000", i, (i+1)*1000)
	}
	for k, w := range want {
		got, err := kerchunk.Describe(ks, k)
		if err != nil || got != w {
			t.Errorf("%s = %q, %v; want %q", k, got, err, w)
		}
	}
	if ks.Len() != 9 {
		t.Errorf("%d references, want 9", ks.Len())
	}
	if len(locs) != 0 {
		t.Errorf("Open opened target stores %v", locs)
	}
}

// TestVersion0 reads a version 0 document: strings, base64, inline JSON,
// ranges and whole-file references relative to the file's directory.
func TestVersion0(t *testing.T) {
	doc := `{".zgroup": "{\"zarr_format\": 2}", "a/.zattrs": {"x": [1, 2]}, "b64": "base64:AAEC/w==",
	         "whole": ["data/f.bin"], "part": ["data/f.bin", 2, 3], "empty": ["data/f.bin", 4, 0]}`
	ks, err := kerchunk.Open(context.Background(), memRefs(t, doc, map[string][]byte{"data/f.bin": []byte("0123456789")}), "refs.json")
	if err != nil {
		t.Fatal(err)
	}
	for k, w := range map[string]string{".zgroup": `{"zarr_format": 2}`, "b64": "\x00\x01\x02\xff", "whole": "0123456789", "part": "234", "empty": ""} {
		if got := get(t, ks, k); got != w {
			t.Errorf("%s = %q, want %q", k, got, w)
		}
	}
	var attrs map[string]any
	if err := json.Unmarshal([]byte(get(t, ks, "a/.zattrs")), &attrs); err != nil || len(attrs) != 1 {
		t.Errorf("inline JSON: %v %v", attrs, err)
	}
	// Ranges of references and of inline values.
	ctx := context.Background()
	for _, c := range []struct {
		key  string
		r    store.ByteRange
		want string
	}{{"part", store.OffsetLen(1, 5), "34"}, {"part", store.Suffix(1), "4"}, {"whole", store.From(8), "89"}, {"b64", store.OffsetLen(1, 2), "\x01\x02"}} {
		b, err := ks.Get(ctx, c.key, c.r)
		if err != nil || string(b) != c.want {
			t.Errorf("%s %v = %q, %v; want %q", c.key, c.r, b, err, c.want)
		}
	}
	if _, err := ks.Get(ctx, "nope", store.Full()); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("missing key: %v", err)
	}
	keys, dirs, err := ks.ListDir(ctx, "")
	if err != nil || strings.Join(keys, ",") != ".zgroup,b64,empty,part,whole" || strings.Join(dirs, ",") != "a/" {
		t.Errorf("ListDir = %v %v %v", keys, dirs, err)
	}
	n := 0
	for k, err := range ks.List(ctx, "a/") {
		if err != nil || k != "a/.zattrs" {
			t.Errorf("List: %q %v", k, err)
		}
		n++
	}
	if n != 1 {
		t.Errorf("List yielded %d keys", n)
	}
}

// TestCompressed reads a gzip-compressed document.
func TestCompressed(t *testing.T) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write([]byte(`{"version": 1, "refs": {"k": "v"}}`))
	zw.Close()
	ks, err := kerchunk.Open(context.Background(), memRefs(t, buf.String(), nil), "refs.json")
	if err != nil {
		t.Fatal(err)
	}
	if got := get(t, ks, "k"); got != "v" {
		t.Errorf("k = %q", got)
	}
}

// TestHostile: malformed documents are ErrInvalid or ErrTooLarge, never a
// panic or an unbounded allocation.
func TestHostile(t *testing.T) {
	for _, c := range []struct{ name, doc string }{
		{"not JSON", `{"a": `},
		{"not an object", `[1, 2]`},
		{"version 2", `{"version": 2, "refs": {}}`},
		{"version string", `{"version": "1", "refs": {}}`},
		{"unknown field", `{"version": 1, "refs": {}, "extra": 1}`},
		{"negative offset", `{"k": ["f", -1, 10]}`},
		{"negative length", `{"k": ["f", 0, -10]}`},
		{"overflow", `{"k": ["f", 9223372036854775807, 10]}`},
		{"float offset", `{"k": ["f", 1.5, 10]}`},
		{"two items", `{"k": ["f", 1]}`},
		{"four items", `{"k": ["f", 1, 2, 3]}`},
		{"url number", `{"k": [1, 1, 2]}`},
		{"url empty", `{"k": [""]}`},
		{"url null", `{"k": [null, 1, 2]}`},
		{"bad base64", `{"k": "base64:!!!"}`},
		{"number value", `{"k": 5}`},
		{"bad key", `{"../k": "v"}`},
		{"key slashes", `{"a//b": "v"}`},
		{"gen huge", `{"version": 1, "gen": [{"key": "k{{i}}", "url": "u", "dimensions": {"i": {"stop": 9223372036854775807}}}]}`},
		{"gen product", `{"version": 1, "gen": [{"key": "k{{i}}{{j}}", "url": "u", "dimensions": {"i": {"stop": 100000}, "j": {"stop": 100000}}}]}`},
		{"gen step 0", `{"version": 1, "gen": [{"key": "k{{i}}", "url": "u", "dimensions": {"i": {"stop": 5, "step": 0}}}]}`},
		{"gen no dims", `{"version": 1, "gen": [{"key": "k", "url": "u", "dimensions": {}}]}`},
		{"gen offset only", `{"version": 1, "gen": [{"key": "k{{i}}", "url": "u", "offset": "1", "dimensions": {"i": [1]}}]}`},
		{"gen bad expr", `{"version": 1, "gen": [{"key": "k{{i}}", "url": "u", "offset": "{{i +}}", "length": "1", "dimensions": {"i": [1]}}]}`},
		{"gen division by zero", `{"version": 1, "gen": [{"key": "k{{i}}", "url": "u", "offset": "{{1 // i}}", "length": "1", "dimensions": {"i": [0]}}]}`},
		{"gen overflow", `{"version": 1, "gen": [{"key": "k{{i}}", "url": "u", "offset": "{{i * 9223372036854775807}}", "length": "1", "dimensions": {"i": [2]}}]}`},
		{"gen negative", `{"version": 1, "gen": [{"key": "k{{i}}", "url": "u", "offset": "{{0 - i}}", "length": "1", "dimensions": {"i": [2]}}]}`},
		{"gen unknown name", `{"version": 1, "gen": [{"key": "k{{nope}}", "url": "u", "dimensions": {"i": [2]}}]}`},
		{"gen bad key", `{"version": 1, "gen": [{"key": "../k{{i}}", "url": "u", "dimensions": {"i": [2]}}]}`},
		{"template unclosed", `{"version": 1, "templates": {"a": "x"}, "refs": {"k": ["{{a", 0, 1]}}`},
		{"template recursion", `{"version": 1, "templates": {"a": "{{a()}}"}, "refs": {"k": ["{{a()}}", 0, 1]}}`},
		{"template filter", `{"version": 1, "templates": {"a": "x"}, "refs": {"k": ["{{a | upper}}", 0, 1]}}`},
		{"template attr", `{"version": 1, "templates": {"a": "x"}, "refs": {"k": ["{{a.__class__}}", 0, 1]}}`},
		{"template blowup", `{"version": 1, "templates": {"a": "{{b()}}{{b()}}{{b()}}{{b()}}{{b()}}{{b()}}{{b()}}{{b()}}", "b": "{{c()}}{{c()}}{{c()}}{{c()}}{{c()}}{{c()}}{{c()}}{{c()}}", "c": "{{d()}}{{d()}}{{d()}}{{d()}}{{d()}}{{d()}}{{d()}}{{d()}}", "d": "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}, "refs": {"k": ["{{a()}}", 0, 1]}}`},
	} {
		_, err := kerchunk.Open(context.Background(), memRefs(t, c.doc, nil), "refs.json", kerchunk.WithMaxKeys(1<<20))
		if !errors.Is(err, kerchunk.ErrInvalid) && !errors.Is(err, kerchunk.ErrTooLarge) {
			t.Errorf("%s: %v, want ErrInvalid or ErrTooLarge", c.name, err)
		}
	}
	// Limits.
	if _, err := kerchunk.Open(context.Background(), memRefs(t, `{"a": "1", "b": "2", "c": "3"}`, nil), "refs.json", kerchunk.WithMaxKeys(2)); !errors.Is(err, kerchunk.ErrTooLarge) {
		t.Errorf("3 keys, max 2: %v", err)
	}
	if _, err := kerchunk.Open(context.Background(), memRefs(t, `{"a": "123456789"}`, nil), "refs.json", kerchunk.WithMaxSize(10)); !errors.Is(err, kerchunk.ErrTooLarge) {
		t.Errorf("document over WithMaxSize: %v", err)
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write([]byte(`{"a": "` + strings.Repeat("x", 1<<20) + `"}`))
	zw.Close()
	if _, err := kerchunk.Open(context.Background(), memRefs(t, buf.String(), nil), "refs.json", kerchunk.WithMaxSize(1<<16)); !errors.Is(err, kerchunk.ErrTooLarge) {
		t.Errorf("gzip bomb: %v", err)
	}
}

// TestRefusedTargets: references outside the allowed prefixes fail on
// Get and Locate, naming the URL, with no request to any server.
func TestRefusedTargets(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { hits.Add(1) }))
	defer srv.Close()
	refs := map[string]string{
		"file":     "file:///etc/passwd",
		"abs":      "/etc/passwd",
		"dotdot":   "../secret",
		"deeper":   "data/../../secret",
		"loopback": srv.URL + "/x",
		"bucket":   "s3://other-bucket/x",
		"scheme":   "gopher://host/x",
	}
	var doc strings.Builder
	doc.WriteString("{")
	i := 0
	for k, u := range refs {
		if i > 0 {
			doc.WriteString(",")
		}
		fmt.Fprintf(&doc, "%q: [%q, 0, 4]", k, u)
		i++
	}
	doc.WriteString("}")
	st := memRefs(t, doc.String(), nil)
	ks, err := kerchunk.Open(context.Background(), st, "refs.json", kerchunk.WithLocation("s3://bucket/refs"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for k, u := range refs {
		_, err := ks.Get(ctx, k, store.Full())
		if !errors.Is(err, virtual.ErrNotAllowed) && !errors.Is(err, virtual.ErrInvalidRef) {
			t.Errorf("%s (%s): %v, want a refusal", k, u, err)
		} else if !strings.Contains(err.Error(), u) {
			t.Errorf("%s: %q does not name %s", k, err, u)
		}
		if _, err := ks.Locate(ctx, k); err == nil {
			t.Errorf("Locate(%s) = nil error", k)
		}
	}
	if hits.Load() != 0 {
		t.Errorf("%d requests made", hits.Load())
	}
}

// TestCoalesced reads a zlib+shuffle dataset of 9 chunks through
// references to a loopback HTTP server and counts the requests: the
// engine joins the neighbouring chunks of the file into one.
func TestCoalesced(t *testing.T) {
	h5, err := os.ReadFile(filepath.Join(fixtures, "filters.h5"))
	if err != nil {
		t.Fatal(err)
	}
	var hits, bytesServed atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if r.URL.Path != "/data/filters.h5" {
			http.NotFound(w, r)
			return
		}
		cw := &countWriter{ResponseWriter: w, n: &bytesServed}
		http.ServeContent(cw, r, "filters.h5", time.Time{}, bytes.NewReader(h5))
	}))
	defer srv.Close()
	doc, err := os.ReadFile(filepath.Join(fixtures, "filters.json"))
	if err != nil {
		t.Fatal(err)
	}
	doc = bytes.Replace(doc, []byte(`"f": "filters.h5"`), []byte(`"f": "`+srv.URL+`/data/filters.h5"`), 1)
	ks, err := kerchunk.Open(context.Background(), memRefs(t, string(doc), nil), "refs.json", kerchunk.Allow(srv.URL+"/data"))
	if err != nil {
		t.Fatal(err)
	}
	checkArray(t, ks, "zlib_shuffle", "zlib_shuffle")
	if n := hits.Load(); n != 1 {
		t.Errorf("%d requests for the 9 chunks of zlib_shuffle, want 1 (coalesced)", n)
	}
	// Without coalescing (one chunk at a time through Get), 9.
	hits.Store(0)
	a, err := zarr.OpenArray(context.Background(), ks, "zlib_shuffle")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		for j := range 3 {
			if _, err := ks.Get(context.Background(), a.ChunkKey([]int{i, j}), store.Full()); err != nil {
				t.Fatal(err)
			}
		}
	}
	if n := hits.Load(); n != 9 {
		t.Errorf("%d requests for 9 single gets, want 9", n)
	}
}

type countWriter struct {
	http.ResponseWriter
	n *atomic.Int64
}

func (w *countWriter) Write(b []byte) (int, error) {
	w.n.Add(int64(len(b)))
	return w.ResponseWriter.Write(b)
}

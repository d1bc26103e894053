package icechunk_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/icechunk"
	"github.com/gozarr/gozarr/store/mem"
	"github.com/gozarr/gozarr/store/s3"
	"github.com/gozarr/gozarr/store/s3/s3test"
	"github.com/gozarr/gozarr/store/storeurl"
	"github.com/gozarr/gozarr/store/virtual"
)

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
			for key, ref := range map[string]virtual.Ref{
				"v/c/0": {URL: tg.url, Offset: 0, Length: 16, Checksum: virtual.Checksum{ETag: v.ETag}},
				"v/c/1": {URL: tg.url, Offset: 16, Length: 16, Checksum: virtual.Checksum{LastModified: lm}},
				"v/c/2": {URL: tg.url, Offset: 32, Length: 16},
			} {
				if err := s.SetVirtual(ctx, key, ref); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := s.Commit(ctx, "virtual", nil); err != nil {
				t.Fatal(err)
			}
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

package icechunk_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/icechunk"
	"github.com/gozarr/gozarr/store/mem"
	"github.com/gozarr/gozarr/store/virtual"
)

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
			for i := range 16 {
				ref := virtual.Ref{URL: tc.url(i), Offset: int64(16 * i), Length: 16, Checksum: tc.sum(i)}
				if err := s.SetVirtual(ctx, "v/c/"+strconv.Itoa(i), ref); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := s.Commit(ctx, "virtual", nil); err != nil {
				t.Fatal(err)
			}
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

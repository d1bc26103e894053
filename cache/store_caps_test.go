package cache_test

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gozarr/gozarr/cache"
	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/objstore"
	"github.com/gozarr/gozarr/store/s3"
	"github.com/gozarr/gozarr/store/s3/s3test"
	"github.com/gozarr/gozarr/zarr"
)

// inFlight is an http.RoundTripper that delays every GET and records the
// most GETs in flight at once.
type inFlight struct {
	next      http.RoundTripper
	now, peak atomic.Int64
}

func (f *inFlight) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodGet {
		n := f.now.Add(1)
		defer f.now.Add(-1)
		for p := f.peak.Load(); n > p && !f.peak.CompareAndSwap(p, n); p = f.peak.Load() {
		}
		time.Sleep(20 * time.Millisecond)
	}
	return f.next.RoundTrip(r)
}

// TestCachedS3KeepsCapabilities (issue 12): an S3 store behind the
// encoded-bytes cache keeps the S3 store's request limit, ReadInto and
// sizes, so a read through it runs with S3's I/O concurrency (64), not the
// default for stores that state no limit (8 on two cores), as it did when
// the wrapper hid them.
func TestCachedS3KeepsCapabilities(t *testing.T) {
	ctx := context.Background()
	srv := s3test.NewFake(t, "bucket")
	rt := &inFlight{next: http.DefaultTransport}
	st := srv.Store(t, "p", s3.WithHTTPClient(&http.Client{Transport: rt}))
	cached := cache.NewStore(st, cache.NewLRU(64<<20))
	caps := store.CapabilitiesOf(cached)
	if caps.MaxConcurrency != objstore.DefaultConcurrency || caps.Into == nil || caps.Sizer == nil || caps.Local {
		t.Fatalf("cached S3 store capabilities %+v: want S3's limit %d, ReadInto, sizes, not local", caps, objstore.DefaultConcurrency)
	}
	// Conditional reads pass the cache by (they must see the current
	// version): a changed value is ErrChanged even once cached.
	if caps.CondReader == nil {
		t.Fatalf("cached S3 store capabilities %+v: no CondReader, the S3 store's conditional reads are lost", caps)
	}
	if err := st.Set(ctx, "cond", []byte("v1")); err != nil {
		t.Fatal(err)
	}
	rc, err := st.ReadCondition(ctx, "cond")
	if err != nil {
		t.Fatal(err)
	}
	if b, err := caps.CondReader.GetIf(ctx, "cond", store.Full(), rc); err != nil || string(b) != "v1" {
		t.Fatalf("GetIf through the cache = %q, %v; want v1", b, err)
	}
	if b, err := cached.Get(ctx, "cond", store.Full()); err != nil || string(b) != "v1" {
		t.Fatalf("Get through the cache = %q, %v; want v1", b, err)
	}
	if err := st.Set(ctx, "cond", []byte("v2")); err != nil {
		t.Fatal(err)
	}
	if b, err := caps.CondReader.GetIf(ctx, "cond", store.Full(), rc); !errors.Is(err, store.ErrChanged) {
		t.Fatalf("GetIf through the cache after a rewrite = %q, %v; want store.ErrChanged", b, err)
	}
	meta := &zarr.ArrayMetadata{Shape: []int{64, 64}, DataType: dtype.TypeUint8, ChunkShape: []int{8, 8},
		ChunkKeyEncoding: zarr.DefaultKeyEncoding(), FillValue: []byte{0}, Codecs: []codecs.Spec{{Name: "bytes"}}}
	a, err := zarr.CreateArray(ctx, cached.(store.Store), "a", meta)
	if err != nil {
		t.Fatal(err)
	}
	vals := make([]uint8, 64*64)
	for i := range vals {
		vals[i] = uint8(i%251 + 1)
	}
	if err := zarr.Write(ctx, a, vals); err != nil {
		t.Fatal(err)
	}
	rt.peak.Store(0)
	got, _, err := zarr.Read[uint8](ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	for i := range vals {
		if got[i] != vals[i] {
			t.Fatalf("element %d = %d, want %d", i, got[i], vals[i])
		}
	}
	// 64 chunks, each GET held 20 ms: with S3's limit they overlap far
	// beyond the 8 a store without a stated limit gets.
	if p := rt.peak.Load(); p <= 8 {
		t.Fatalf("at most %d GETs in flight reading 64 chunks through the cached S3 store, want more than 8", p)
	}
}

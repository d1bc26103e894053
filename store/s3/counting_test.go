package s3_test

import (
	"bytes"
	"context"
	"slices"
	"testing"

	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/s3"
	"github.com/gozarr/gozarr/store/s3/s3test"
)

// TestCountingWrapperKeepsRanges: store.GetRanges through a counting
// wrapper over S3 (store.CountingStore, which forwards the store's
// capabilities) uses S3's batched GetRanges: three nearby ranges cost one
// GET on the wire and one counted request, not three (issue 24: it took
// the type-asserting path before).
func TestCountingWrapperKeepsRanges(t *testing.T) {
	ctx := context.Background()
	srv := s3test.NewFake(t, "counting")
	rec := s3test.NewRecorder(nil)
	st := srv.Store(t, uniquePrefix("counting"), s3.WithHTTPClient(rec.Client()))
	if err := st.Set(ctx, "k", []byte("0123456789")); err != nil {
		t.Fatal(err)
	}
	counted := store.NewCountingStore(st)
	rec.Reset()
	got, err := store.GetRanges(ctx, counted, "k", []store.ByteRange{store.OffsetLen(0, 2), store.OffsetLen(3, 2), store.OffsetLen(7, 3)})
	if err != nil {
		t.Fatal(err)
	}
	if want := [][]byte{[]byte("01"), []byte("34"), []byte("789")}; !slices.EqualFunc(got, want, bytes.Equal) {
		t.Fatalf("GetRanges = %q, want %q", got, want)
	}
	if n := rec.Count("GET"); n != 1 {
		t.Errorf("%d GETs on the wire for 3 nearby ranges, want 1", n)
	}
	if n := counted.Requests(); n != 1 {
		t.Errorf("the wrapper counted %d requests, want 1 (a batched read)", n)
	}
	if n := counted.Bytes(); n != 7 {
		t.Errorf("the wrapper counted %d bytes, want 7", n)
	}
}

package s3_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/s3/s3test"
)

// TestConditionalWrites runs against the real S3 server (versitygw in CI):
// a conditional PutObject replaces an object only at the ETag read,
// creates only when it is absent, and a write in between makes the stale
// ETag a store.ErrConflict.
func TestConditionalWrites(t *testing.T) {
	srv := s3test.FromEnv(t)
	s := srv.Store(t, fmt.Sprintf("cond-%d/", time.Now().UnixNano()))
	ctx := context.Background()
	if _, _, err := s.GetVersion(ctx, "k"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("missing key: %v", err)
	}
	if err := s.SetIfVersion(ctx, "k", []byte("a"), ""); err != nil {
		t.Fatalf("create: %v", err)
	}
	if err := s.SetIfVersion(ctx, "k", []byte("b"), ""); !errors.Is(err, store.ErrConflict) {
		t.Skipf("create over an existing object: %v, want ErrConflict: this server ignores If-None-Match", err)
	}
	v, etag, err := s.GetVersion(ctx, "k")
	if err != nil || string(v) != "a" {
		t.Fatalf("GetVersion: %q %v", v, err)
	}
	if err := s.Set(ctx, "k", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := s.SetIfVersion(ctx, "k", []byte("c"), etag); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("stale ETag after a Set: %v, want ErrConflict", err)
	}
	_, etag, _ = s.GetVersion(ctx, "k")
	if err := s.SetIfVersion(ctx, "k", []byte("d"), etag); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Get(ctx, "k", store.Full()); err != nil || string(got) != "d" {
		t.Fatalf("after a conditional replace: %q %v", got, err)
	}
}

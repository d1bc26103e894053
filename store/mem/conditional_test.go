package mem_test

import (
	"context"
	"errors"
	"testing"

	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/mem"
)

// TestConditionalWrites: SetIfVersion replaces a value only at the version
// read, creates only when asked for a missing key, and a write in between
// (Set, Delete, another SetIfVersion) makes the stale version conflict.
func TestConditionalWrites(t *testing.T) {
	ctx := context.Background()
	s := mem.New()
	if _, _, err := s.GetVersion(ctx, "k"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("missing key: %v", err)
	}
	if err := s.SetIfVersion(ctx, "k", []byte("a"), ""); err != nil {
		t.Fatalf("create: %v", err)
	}
	if err := s.SetIfVersion(ctx, "k", []byte("b"), ""); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("create over an existing key: %v, want ErrConflict", err)
	}
	v, ver, err := s.GetVersion(ctx, "k")
	if err != nil || string(v) != "a" {
		t.Fatalf("GetVersion: %q %v", v, err)
	}
	if err := s.Set(ctx, "k", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := s.SetIfVersion(ctx, "k", []byte("c"), ver); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("stale version after Set: %v, want ErrConflict", err)
	}
	_, ver, _ = s.GetVersion(ctx, "k")
	if err := s.SetIfVersion(ctx, "k", []byte("d"), ver); err != nil {
		t.Fatal(err)
	}
	if err := s.SetIfVersion(ctx, "k", []byte("e"), ver); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("the same version twice: %v, want ErrConflict", err)
	}
	_, ver, _ = s.GetVersion(ctx, "k")
	if err := s.Delete(ctx, "k"); err != nil {
		t.Fatal(err)
	}
	if err := s.SetIfVersion(ctx, "k", []byte("f"), ver); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("stale version after Delete: %v, want ErrConflict", err)
	}
	if got, _ := s.Get(ctx, "k", store.Full()); got != nil {
		t.Fatalf("value %q after conflicts, want none", got)
	}
}

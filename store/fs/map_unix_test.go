//go:build unix

package fs_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/gozarr/gozarr/store"
)

// TestMap checks that Map returns a value's bytes as Get does, no bytes
// for an empty value, ErrNotFound for a missing key and for a directory,
// and that the capability reaches readers (store.CapabilitiesOf) and
// passes through a CountingStore, counted.
func TestMap(t *testing.T) {
	ctx := context.Background()
	s, _ := newStore(t)
	value := make([]byte, 3<<16+5)
	for i := range value {
		value[i] = byte(i * 31)
	}
	for key, v := range map[string][]byte{"c/0/1": value, "empty": {}} {
		if err := s.Set(ctx, key, v); err != nil {
			t.Fatal(err)
		}
		b, unmap, err := s.Map(ctx, key)
		if err != nil {
			t.Fatalf("Map(%s): %v", key, err)
		}
		if !slices.Equal(b, v) {
			t.Fatalf("Map(%s): %d bytes, not the %d set", key, len(b), len(v))
		}
		unmap()
	}
	for _, key := range []string{"missing", "c/0"} {
		if _, _, err := s.Map(ctx, key); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("Map(%s) = %v, want ErrNotFound", key, err)
		}
	}
	c := store.NewCountingStore(s)
	m := store.CapabilitiesOf(c).Mapper
	if store.CapabilitiesOf(s).Mapper == nil || m == nil {
		t.Fatal("the Mapper capability is not reported, or not passed through a CountingStore")
	}
	b, unmap, err := m.Map(ctx, "c/0/1")
	if err != nil || !slices.Equal(b, value) {
		t.Fatalf("Map through a CountingStore: %d bytes, %v", len(b), err)
	}
	unmap()
	if c.Bytes() != int64(len(value)) || c.Requests() != 1 {
		t.Fatalf("counted %d bytes in %d requests, want %d in 1", c.Bytes(), c.Requests(), len(value))
	}
}

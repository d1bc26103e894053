package storetest

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/gozarr/gozarr/store"
)

// TestCapabilities checks what a store declares (store.CapabilitiesOf)
// against what it does, for every capability it declares:
//   - a remote store (one with a request limit, MaxConcurrency > 0) names
//     its data (store.Identifier: IDOf is not the address fallback, and
//     stays the same), and, when it batches ranges, reports the knobs it
//     joins them with (Coalesce), so a reader does not join them again;
//   - Ranges, Into and Sizer answer as Get does;
//   - Conditional: GetVersion and SetIfVersion keep their contract
//     (create only if absent, replace only the version read, ErrConflict
//     otherwise), and concurrent read-modify-writes of one key, each
//     retried on ErrConflict, lose none of their updates.
//
// newStore returns a fresh, empty store; TestStore runs this too.
func TestCapabilities(t *testing.T, newStore func(t *testing.T) store.Store) {
	t.Helper()
	s := newStore(t)
	caps := store.CapabilitiesOf(s)
	t.Run("Identity", func(t *testing.T) {
		id := store.IDOf(s)
		if id != store.IDOf(s) || id == "" {
			t.Fatalf("IDOf changes or is empty: %q", id)
		}
		if caps.MaxConcurrency > 0 && id == fmt.Sprintf("%T@%p", s, s) {
			t.Errorf("remote store %T names no data (IDOf falls back to its address %q): implement store.Identifier", s, id)
		}
	})
	t.Run("CoalesceKnobs", func(t *testing.T) {
		if caps.MaxConcurrency > 0 && caps.Ranges != nil && caps.Coalesce == (store.CoalesceOptions{}) {
			t.Errorf("remote store %T batches ranges but reports no coalescing knobs", s)
		}
	})
	t.Run("DeclaredReads", func(t *testing.T) { testDeclaredReads(t, s, caps) })
	if caps.Conditional != nil {
		t.Run("Conditional", func(t *testing.T) { testConditional(t, s, caps.Conditional) })
		t.Run("ConditionalRace", func(t *testing.T) { testConditionalRace(t, caps.Conditional) })
	}
}

// testDeclaredReads checks the declared read capabilities against Get.
func testDeclaredReads(t *testing.T, s store.Store, caps store.Capabilities) {
	ctx := context.Background()
	val := pattern(3000, 7)
	if err := s.Set(ctx, "caps/k", val); err != nil {
		t.Fatal(err)
	}
	if caps.Ranges != nil {
		rs := []store.ByteRange{store.OffsetLen(10, 5), store.OffsetLen(0, 3), store.Suffix(4), store.OffsetLen(2990, 100)}
		got, err := caps.Ranges.GetRanges(ctx, "caps/k", rs)
		if err != nil || len(got) != len(rs) {
			t.Fatalf("GetRanges: %d results, %v", len(got), err)
		}
		for i, r := range rs {
			want, _ := s.Get(ctx, "caps/k", r)
			if !bytes.Equal(got[i], want) {
				t.Errorf("GetRanges[%d] (%v) = %s, Get = %s", i, r, show(got[i]), show(want))
			}
		}
	}
	if caps.Into != nil {
		dst := make([]byte, 100)
		n, err := caps.Into.ReadInto(ctx, "caps/k", 2950, dst)
		if err != nil || n != 50 || !bytes.Equal(dst[:n], val[2950:]) {
			t.Errorf("ReadInto past the end: %d bytes, %v", n, err)
		}
	}
	if caps.Sizer != nil {
		if n, err := caps.Sizer.Size(ctx, "caps/k"); err != nil || n != int64(len(val)) {
			t.Errorf("Size = %d, %v; want %d", n, err, len(val))
		}
	}
}

// testConditional checks the contract of a ConditionalWriter c over the
// store st: a version replaced once (by SetIfVersion, Set or Delete) is
// stale, and a stale version writes nothing.
func testConditional(t *testing.T, st store.Store, c store.ConditionalWriter) {
	ctx := context.Background()
	if _, _, err := c.GetVersion(ctx, "cond/k"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("GetVersion of a missing key: %v, want ErrNotFound", err)
	}
	if err := c.SetIfVersion(ctx, "cond/k", []byte("v1"), ""); err != nil {
		t.Fatalf("create if absent: %v", err)
	}
	if err := c.SetIfVersion(ctx, "cond/k", []byte("other"), ""); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("create if absent over an existing key: %v, want ErrConflict", err)
	}
	b, v1, err := c.GetVersion(ctx, "cond/k")
	if err != nil || string(b) != "v1" || v1 == "" {
		t.Fatalf("GetVersion = %q, %q, %v", b, v1, err)
	}
	if err := c.SetIfVersion(ctx, "cond/k", []byte("v2"), v1); err != nil {
		t.Fatalf("replace the version read: %v", err)
	}
	if err := c.SetIfVersion(ctx, "cond/k", []byte("v3"), v1); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("replace a stale version: %v, want ErrConflict", err)
	}
	b, v2, err := c.GetVersion(ctx, "cond/k")
	if err != nil || string(b) != "v2" || v2 == v1 {
		t.Fatalf("after the conditional writes: %q, version %q (was %q), %v", b, v2, v1, err)
	}
	// An empty value has a version too.
	if err := c.SetIfVersion(ctx, "cond/empty", []byte{}, ""); err != nil {
		t.Fatal(err)
	}
	if b, v, err := c.GetVersion(ctx, "cond/empty"); err != nil || len(b) != 0 || v == "" {
		t.Fatalf("GetVersion of an empty value: %q, %q, %v", b, v, err)
	}
	if err := st.Set(ctx, "cond/k", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := c.SetIfVersion(ctx, "cond/k", []byte("c"), v2); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("stale version after a Set: %v, want ErrConflict", err)
	}
	_, v3, err := c.GetVersion(ctx, "cond/k")
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Delete(ctx, "cond/k"); err != nil {
		t.Fatal(err)
	}
	if err := c.SetIfVersion(ctx, "cond/k", []byte("f"), v3); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("stale version after a Delete: %v, want ErrConflict", err)
	}
	if got, err := st.Get(ctx, "cond/k", store.Full()); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("value %q (%v) after the conflicts, want none", got, err)
	}
}

// testConditionalRace runs writers that each add their updates to one
// key's counters by read-modify-write, retrying on ErrConflict: no update
// may be lost.
func testConditionalRace(t *testing.T, c store.ConditionalWriter) {
	const writers, updates = 4, 5
	ctx := context.Background()
	if err := c.SetIfVersion(ctx, "race/k", make([]byte, 8*writers), ""); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Go(func() {
			for range updates {
				for attempt := 0; ; attempt++ {
					b, v, err := c.GetVersion(ctx, "race/k")
					if err != nil {
						errs <- err
						return
					}
					if len(b) != 8*writers {
						errs <- fmt.Errorf("value of %d bytes", len(b))
						return
					}
					binary.LittleEndian.PutUint64(b[8*w:], binary.LittleEndian.Uint64(b[8*w:])+1)
					err = c.SetIfVersion(ctx, "race/k", b, v)
					if err == nil {
						break
					}
					if !errors.Is(err, store.ErrConflict) || attempt > 1000 {
						errs <- err
						return
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	b, _, err := c.GetVersion(ctx, "race/k")
	if err != nil {
		t.Fatal(err)
	}
	for w := range writers {
		if n := binary.LittleEndian.Uint64(b[8*w:]); n != updates {
			t.Errorf("writer %d: %d of its %d updates kept", w, n, updates)
		}
	}
}

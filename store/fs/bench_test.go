package fs_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/gozarr/gozarr/store"
)

// BenchmarkSmallValues reads and writes small values at the depth of a
// chunk key ("c/i/j/k"), where the cost of opening a file dominates: what
// confining the store to its root must not make slower.
func BenchmarkSmallValues(b *testing.B) {
	ctx := context.Background()
	s, _ := newStore(b)
	const n = 64
	keys := make([]string, n)
	val := make([]byte, 4<<10)
	for i := range keys {
		keys[i] = fmt.Sprintf("c/%d/%d/0", i/8, i%8)
		if err := s.Set(ctx, keys[i], val); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("Get4K", func(b *testing.B) {
		b.SetBytes(int64(len(val)))
		i := 0
		for b.Loop() {
			if _, err := s.Get(ctx, keys[i%n], store.Full()); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
	b.Run("ReadInto4K", func(b *testing.B) {
		b.SetBytes(int64(len(val)))
		dst := make([]byte, len(val))
		i := 0
		for b.Loop() {
			if _, err := s.ReadInto(ctx, keys[i%n], 0, dst); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
	b.Run("Size", func(b *testing.B) {
		i := 0
		for b.Loop() {
			if _, err := s.Size(ctx, keys[i%n]); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
	b.Run("Set4K", func(b *testing.B) {
		b.SetBytes(int64(len(val)))
		i := 0
		for b.Loop() {
			if err := s.Set(ctx, keys[i%n], val); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
}

package mem_test

import (
	"context"
	"testing"

	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/mem"
	"github.com/gozarr/gozarr/store/storetest"
)

func TestConformance(t *testing.T) {
	storetest.TestStore(t, func(t *testing.T) store.Store { return mem.New() })
}

// TestReaderConformance runs the read-only suite on a store reduced to
// store.Reader, which exercises the generic GetRanges fallback.
func TestReaderConformance(t *testing.T) {
	storetest.TestReader(t, func(t *testing.T, contents map[string][]byte) store.Reader {
		s := mem.New()
		for k, v := range contents {
			if err := s.Set(context.Background(), k, v); err != nil {
				t.Fatal(err)
			}
		}
		return struct{ store.Reader }{s}
	})
}

func BenchmarkStore(b *testing.B) { storetest.BenchmarkStore(b, mem.New()) }

package cache

import (
	"fmt"
	"testing"
)

// BenchmarkGet measures a hit of a 128 KiB float32 chunk in each cache
// (the compressed and disk caches decode into a fresh slice).
func BenchmarkGet(b *testing.B) {
	v := val("chunk", 128<<10)
	d, err := NewDisk(1<<30, DiskOptions{Dir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	for _, c := range []struct {
		name string
		c    Cache
	}{
		{"lru", NewLRU(1 << 30)},
		{"lz4-shuffle", NewCompressed(1<<30, CompressedOptions{ElemSize: 4})},
		{"lz4", NewCompressed(1<<30, CompressedOptions{})},
		{"zstd-shuffle", NewCompressed(1<<30, CompressedOptions{ElemSize: 4, Codec: Zstd})},
		{"disk", d},
	} {
		c.c.Add("k", v)
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(v)))
			b.ReportAllocs()
			for b.Loop() {
				if _, ok := c.c.Get("k"); !ok {
					b.Fatal("miss")
				}
			}
			st := c.c.Stats()
			b.ReportMetric(float64(st.ValueBytes)/float64(max(1, st.Bytes)), "ratio")
		})
	}
}

// BenchmarkAdd measures adding (compressing, writing) a 128 KiB chunk.
func BenchmarkAdd(b *testing.B) {
	v := val("chunk", 128<<10)
	d, err := NewDisk(64<<20, DiskOptions{Dir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	for _, c := range []struct {
		name string
		c    Cache
	}{
		{"lru", NewLRU(64 << 20)},
		{"lz4-shuffle", NewCompressed(64<<20, CompressedOptions{ElemSize: 4})},
		{"zstd-shuffle", NewCompressed(64<<20, CompressedOptions{ElemSize: 4, Codec: Zstd})},
		{"disk", d},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(v)))
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				c.c.Add(fmt.Sprint(i%64), v)
				i++
			}
		})
	}
}

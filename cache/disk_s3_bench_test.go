package cache

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/s3"
	"github.com/gozarr/gozarr/store/s3/s3test"
)

// BenchmarkDiskTierVsS3 measures what the disk tier is for: re-reading a
// 1 MiB chunk from the disk cache against re-fetching it from S3 with 20 ms
// of latency per request (in-process gofakes3 behind s3test.Latency). Run
// with -bench DiskTierVsS3; the ratio of the two ns/op is the figure.
func BenchmarkDiskTierVsS3(b *testing.B) {
	ctx := context.Background()
	value := val("chunk", 1<<20)
	b.Run("s3-20ms", func(b *testing.B) {
		srv := s3test.NewFake(b, "bench")
		up := srv.Store(b, "p")
		if err := up.Set(ctx, "chunk", value); err != nil {
			b.Fatal(err)
		}
		client := &http.Client{Transport: s3test.Latency(nil, 20*time.Millisecond)}
		st, err := s3.Open(ctx, srv.Bucket, "p", srv.Options(s3.WithHTTPClient(client))...)
		if err != nil {
			b.Fatal(err)
		}
		b.SetBytes(int64(len(value)))
		for b.Loop() {
			if _, err := st.Get(ctx, "chunk", store.Full()); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("disk", func(b *testing.B) {
		d, err := NewDisk(64<<20, DiskOptions{Dir: b.TempDir()})
		if err != nil {
			b.Fatal(err)
		}
		defer d.Close()
		d.Add("chunk", value)
		b.SetBytes(int64(len(value)))
		for b.Loop() {
			if _, ok := d.Get("chunk"); !ok {
				b.Fatal("miss")
			}
		}
	})
}

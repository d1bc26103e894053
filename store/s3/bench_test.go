package s3_test

import (
	"context"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/s3"
	"github.com/gozarr/gozarr/store/s3/s3test"
	"github.com/gozarr/gozarr/store/storetest"
)

func BenchmarkFake(b *testing.B) {
	storetest.BenchmarkStore(b, s3test.NewFake(b, "bench").Store(b, "bench"))
}

func BenchmarkRealS3(b *testing.B) {
	srv := s3test.FromEnv(b)
	storetest.BenchmarkStore(b, srv.Store(b, "gozarr-bench"))
}

// BenchmarkGetRangesLatency reads 256 scattered 4 KiB ranges of one 8 MiB
// object (no coalescing) with GetRanges, through a transport adding 20 ms to
// every request, on the real S3 server when configured and the fake
// otherwise. With the default limit of 64 requests in flight the floor is
// 256/64 × 20 ms = 80 ms; the benchmark reports its time over that floor as
// x-floor.
func BenchmarkGetRangesLatency(b *testing.B) {
	const (
		nRanges = 256
		rlen    = 4 << 10
		lat     = 20 * time.Millisecond
	)
	srv := s3test.NewFake(b, "bench")
	if real, ok := s3test.LookupEnv(); ok {
		srv = real
	}
	ctx := context.Background()
	prefix := uniquePrefix("gozarr-bench")
	seed := srv.Store(b, prefix)
	val := make([]byte, 8<<20)
	for i := range val {
		val[i] = byte(i >> 12)
	}
	if err := seed.Set(ctx, "v", val); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { seed.Delete(ctx, "v") })
	var ranges []store.ByteRange
	for i := range nRanges {
		ranges = append(ranges, store.OffsetLen(int64(i)*(int64(len(val))/nRanges), rlen))
	}
	for _, conc := range []int{16, 64} {
		b.Run("concurrency="+strconv.Itoa(conc), func(b *testing.B) {
			tr := http.DefaultTransport.(*http.Transport).Clone()
			tr.MaxIdleConnsPerHost = conc
			st := srv.Store(b, prefix,
				s3.WithHTTPClient(&http.Client{Transport: s3test.Latency(tr, lat)}),
				s3.WithConcurrency(conc),
				s3.WithCoalesce(store.CoalesceOptions{MaxGap: -1}))
			b.SetBytes(nRanges * rlen)
			b.ReportAllocs()
			start := time.Now()
			for b.Loop() {
				got, err := st.GetRanges(ctx, "v", ranges)
				if err != nil || len(got) != nRanges || len(got[nRanges-1]) != rlen {
					b.Fatalf("GetRanges: %d results, %v", len(got), err)
				}
			}
			per := time.Since(start) / time.Duration(b.N)
			floor := time.Duration((nRanges+conc-1)/conc) * lat
			b.ReportMetric(float64(per)/float64(floor), "x-floor")
		})
	}
}

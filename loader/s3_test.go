package loader

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/store/s3"
	"github.com/gozarr/gozarr/store/s3/s3test"
	"github.com/gozarr/gozarr/zarr"
)

// TestOverS3 reads block-shuffled batches from an S3 server (the in-process
// fake) with 5 ms added to every request, through a CountingStore: the same
// batches as from memory, every request counted and timed.
func TestOverS3(t *testing.T) {
	ctx := context.Background()
	ds, _ := testData(t)
	want := collect(t, newLoader(t, ds, Config{BatchSize: 50, Sampler: Sampler{Kind: BlockShuffle, K: 3}, Seed: 2}), -1)

	srv := s3test.NewFake(t, "loader")
	st := srv.Store(t, "data", s3.WithHTTPClient(&http.Client{Transport: s3test.Latency(nil, 5*time.Millisecond)}))
	// The same arrays as testData's, written to S3.
	for _, f := range ds.Fields {
		src := f.Array
		meta := src.Metadata()
		var opts []zarr.MetadataOption
		if shards := src.Shards(); shards != nil {
			zs, _ := codecs.NewZstd(1, false)
			opts = append(opts, zarr.Shards(shards...), zarr.Compress(zs))
		}
		m, err := zarr.NewArrayMetadata(meta.Shape, meta.DataType, src.Chunks(), opts...)
		if err != nil {
			t.Fatal(err)
		}
		dst, err := zarr.CreateArray(ctx, st, src.Name(), m)
		if err != nil {
			t.Fatal(err)
		}
		raw, _, err := src.ReadBytes(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := dst.WriteBytes(ctx, raw); err != nil {
			t.Fatal(err)
		}
	}
	cs := NewCountingStore(st)
	var remote Dataset
	for _, f := range ds.Fields {
		a, err := zarr.OpenArray(ctx, cs, f.Array.Name())
		if err != nil {
			t.Fatal(err)
		}
		remote.Fields = append(remote.Fields, Field{Name: f.Name, Array: a})
	}
	before := cs.Requests()
	l := newLoader(t, remote, Config{BatchSize: 50, Sampler: Sampler{Kind: BlockShuffle, K: 3}, Seed: 2, Counter: cs, Reads: 16})
	got := collect(t, l, -1)
	if len(got) != len(want) {
		t.Fatalf("%d batches, %d from memory", len(got), len(want))
	}
	for i := range want {
		if !got[i].equal(want[i]) {
			t.Fatalf("batch %d differs from memory's", i)
		}
	}
	s := l.Stats()
	if s.FetchedBytes <= 0 || s.Fetch.N < cs.Requests()-before || s.Fetch.P50 < 5*time.Millisecond {
		t.Fatalf("stats %+v (requests %d)", s, cs.Requests()-before)
	}
}

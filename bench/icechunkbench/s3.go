package main

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"sync/atomic"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/icechunk"
	"github.com/gozarr/gozarr/store/mem"
	"github.com/gozarr/gozarr/store/s3"
	"github.com/gozarr/gozarr/store/s3/s3test"
	"github.com/gozarr/gozarr/zarr"
)

// countingTransport counts the requests that reach the server.
type countingTransport struct {
	next http.RoundTripper
	n    atomic.Int64
}

func (c *countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return c.next.RoundTrip(req)
}

// s3Result is one timed read.
type s3Result struct {
	d    time.Duration
	reqs int64
}

// benchS3 writes a side² float32 array (zstd level 1 inner chunks of 256²
// in shards of 2048²) once into a memory store, copies its objects into
// an in-process fake S3 server (gofakes3) twice: as plain Zarr under
// plain/, and committed into an Icechunk repository under repo/ (each
// shard one native chunk, as a session writes it). Then it reads the
// whole array back through store/s3 with latency added to every request,
// plain and through the repository (opened afresh each time: repo object,
// snapshot and manifest requests counted), -reps times each, interleaved,
// and reports the medians and their ratio.
func benchS3(ctx context.Context, side int, latency time.Duration, reps, conc int) error {
	zs, _ := codecs.NewZstd(1, false)
	shard, inner := min(2048, side), min(256, side)
	meta, err := zarr.NewArrayMetadata([]int{side, side}, dtype.TypeFloat32, []int{inner, inner}, zarr.Shards(shard, shard), zarr.Compress(zs))
	if err != nil {
		return err
	}
	// a smooth field plus a little noise, quantized to 1/64, so that zstd
	// has something to do and something to win
	data := make([]byte, 4*side*side)
	rowT, colT := make([]float64, side), make([]float64, side)
	for i := range side {
		rowT[i], colT[i] = math.Cos(float64(i)/300)*50, math.Sin(float64(i)/400)*40
	}
	for i := range side {
		for j := range side {
			v := math.Round((rowT[i]+colT[j]+float64((i*7+j*13)%11)/8)*64) / 64
			putF32(data[4*(i*side+j):], float32(v))
		}
	}
	plainMem := mem.New()
	a, err := zarr.CreateArray(ctx, plainMem, "", meta)
	if err != nil {
		return err
	}
	t0 := time.Now()
	if err := a.WriteBytes(ctx, data); err != nil {
		return err
	}
	encode := time.Since(t0)
	// the repository: a spec 2 repository in memory, the same objects set
	// into a session and committed
	repoMem := mem.New()
	r, err := icechunk.Create(ctx, repoMem)
	if err != nil {
		return err
	}
	sess, err := r.Session(ctx, "main")
	if err != nil {
		return err
	}
	if _, err := zarr.CreateGroup(ctx, sess, "", nil); err != nil {
		return err
	}
	var stored int64
	keys := []string{zarr.MetadataKey}
	for k, err := range plainMem.List(ctx, "") {
		if err != nil {
			return err
		}
		if k != zarr.MetadataKey {
			keys = append(keys, k)
		}
	}
	for _, k := range keys {
		v, err := plainMem.Get(ctx, k, store.Full())
		if err != nil {
			return err
		}
		stored += int64(len(v))
		if err := sess.Set(ctx, "a/"+k, v); err != nil {
			return err
		}
	}
	if _, err := sess.Commit(ctx, "the benchmark array", nil); err != nil {
		return err
	}

	backend := s3mem.New()
	const bucket = "icechunkbench"
	if err := backend.CreateBucket(bucket); err != nil {
		return err
	}
	ts := httptest.NewServer(gofakes3.New(backend).Server())
	defer ts.Close()
	srv := &s3test.Server{Endpoint: ts.URL, AccessKey: "test", SecretKey: "testsecret", Bucket: bucket, Region: "us-east-1"}
	for prefix, src := range map[string]*mem.Store{"plain/a": plainMem, "repo": repoMem} {
		w, err := s3.Open(ctx, bucket, prefix, srv.Options()...)
		if err != nil {
			return err
		}
		for k, err := range src.List(ctx, "") {
			if err != nil {
				return err
			}
			v, err := src.Get(ctx, k, store.Full())
			if err != nil {
				return err
			}
			if err := w.Set(ctx, k, v); err != nil {
				return fmt.Errorf("filling the fake S3 server: %w", err)
			}
		}
	}
	plainMem, repoMem, sess, r = nil, nil, nil, nil
	runtime.GC()

	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns, tr.MaxIdleConnsPerHost = 2*conc, 2*conc
	counter := &countingTransport{next: s3test.Latency(tr, latency)}
	client := &http.Client{Transport: counter}
	open := func(prefix string) (*s3.Store, error) {
		return s3.Open(ctx, bucket, prefix, srv.Options(s3.WithHTTPClient(client), s3.WithConcurrency(conc))...)
	}
	got := make([]byte, len(data))
	read := func(icechunkRepo bool) (s3Result, error) {
		clear(got)
		n0 := counter.n.Load()
		t := time.Now()
		var arr *zarr.Array
		if icechunkRepo {
			st, err := open("repo")
			if err != nil {
				return s3Result{}, err
			}
			repo, err := icechunk.Open(ctx, st)
			if err != nil {
				return s3Result{}, err
			}
			snap, err := repo.CheckoutRef(ctx, "main")
			if err != nil {
				return s3Result{}, err
			}
			if arr, err = zarr.OpenArray(ctx, snap, "a"); err != nil {
				return s3Result{}, err
			}
		} else {
			st, err := open("plain/a")
			if err != nil {
				return s3Result{}, err
			}
			if arr, err = zarr.OpenArray(ctx, st, ""); err != nil {
				return s3Result{}, err
			}
		}
		if err := arr.ReadBytesInto(ctx, got); err != nil {
			return s3Result{}, err
		}
		res := s3Result{time.Since(t), counter.n.Load() - n0}
		if !bytes.Equal(got, data) {
			return res, fmt.Errorf("the array read back differs from the one written (icechunk %v)", icechunkRepo)
		}
		return res, nil
	}
	var plain, repo []s3Result
	for i := range reps + 1 {
		for _, ic := range []bool{false, true} {
			res, err := read(ic)
			if err != nil {
				return err
			}
			if i == 0 {
				continue // warm-up: connections, pools
			}
			if ic {
				repo = append(repo, res)
			} else {
				plain = append(plain, res)
			}
		}
	}
	med := func(rs []s3Result) s3Result {
		slices.SortFunc(rs, func(a, b s3Result) int { return int(a.d - b.d) })
		return rs[len(rs)/2]
	}
	p, q := med(plain), med(repo)
	mib := float64(len(data)) / (1 << 20)
	fmt.Printf("s3: %d×%d float32 (%.0f MiB decoded, %.0f MiB stored: shards of %d² of zstd-1 chunks of %d², encoding took %.1f s) on gofakes3 over loopback HTTP, +%v per request, concurrency %d, median of %d (after a warm-up), open included:\n",
		side, side, mib, float64(stored)/(1<<20), shard, inner, encode.Seconds(), latency, conc, reps)
	fmt.Printf("  plain      %8.1f ms  %5d requests  %7.1f MiB/s\n", ms(p.d), p.reqs, mib/p.d.Seconds())
	fmt.Printf("  icechunk   %8.1f ms  %5d requests  %7.1f MiB/s   throughput ratio icechunk/plain %.2f\n", ms(q.d), q.reqs, mib/q.d.Seconds(), p.d.Seconds()/q.d.Seconds())
	return nil
}

// Command icechunkbench measures reading through an Icechunk repository
// against the same data as plain Zarr, on one in-memory store with an
// injected per-request latency, and what opening one chunk among many
// costs:
//
//		go run ./bench/icechunkbench            # ~1 min on 2 cores
//		go run ./bench/icechunkbench -refs 100000 -side 2048
//
//	  - sharded: a float32 array (-side² values, zstd level 1 inner chunks of
//	    128², shards of 512²) written through an Icechunk session and
//	    committed, and the same array written plain; each read whole, opened
//	    afresh, -reps times; the median times and requests, and their ratio.
//	  - refs: an array of -refs inline chunk refs committed in manifests
//	    split every -split refs; then a fresh open of the repository, a
//	    checkout of main and a read of one chunk: the requests and bytes it
//	    fetched against the manifests' total, and the cache's bytes per ref
//	    held; then every manifest loaded (a listing), and bytes per ref again.
//
// The repository starts as a copy of testdata/icechunk/spec2 (the core's,
// with history). Every read is checked against what was
// written.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"log"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"time"

	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/loader"
	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/icechunk"
	"github.com/gozarr/gozarr/store/mem"
	"github.com/gozarr/gozarr/zarr"
)

// slow adds a fixed latency to every read of a store, and states a
// request limit so the pipeline keeps that many in flight, as on S3.
type slow struct {
	store.Reader
	latency time.Duration
}

func (s slow) Get(ctx context.Context, key string, r store.ByteRange) ([]byte, error) {
	time.Sleep(s.latency)
	return s.Reader.Get(ctx, key, r)
}
func (s slow) MaxConcurrency() int  { return 64 }
func (s slow) Unwrap() store.Reader { return s.Reader }

func main() {
	side := flag.Int("side", 2048, "side of the sharded float32 array")
	refs := flag.Int("refs", 1_000_000, "chunk refs of the many-refs array")
	split := flag.Int("split", 10_000, "refs per manifest")
	latency := flag.Duration("latency", 20*time.Millisecond, "latency added to every read")
	reps := flag.Int("reps", 3, "repetitions of each read")
	fixture := flag.String("fixture", "testdata/icechunk/spec2", "repository to start from")
	flag.Parse()
	ctx := context.Background()
	base := mem.New()
	if err := filepath.WalkDir(*fixture, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(*fixture, p)
		return base.Set(ctx, "repo/"+filepath.ToSlash(rel), b)
	}); err != nil {
		log.Fatal(err)
	}
	repoStore := prefixed{base, "repo/"}
	plainStore := prefixed{base, "plain/"}

	// the sharded array, in the repository and plain
	zs, _ := codecs.NewZstd(1, false)
	meta, err := zarr.NewArrayMetadata([]int{*side, *side}, dtype.TypeFloat32, []int{512, 512}, zarr.Sharded(128, 128), zarr.Compress(zs))
	if err != nil {
		log.Fatal(err)
	}
	data := make([]byte, 4**side**side)
	for i := 0; i < *side**side; i++ {
		v := float32(math.Sin(float64(i%*side)/40) + math.Cos(float64(i / *side)/30) + float64(i%7)/100)
		putF32(data[4*i:], v)
	}
	r, err := icechunk.Open(ctx, repoStore)
	if err != nil {
		log.Fatal(err)
	}
	s, err := r.Session(ctx, "main", icechunk.WithManifestSplit(*split))
	if err != nil {
		log.Fatal(err)
	}
	for _, st := range []store.Store{s, plainStore} {
		a, err := zarr.CreateArray(ctx, st, "sharded", meta)
		if err != nil {
			log.Fatal(err)
		}
		if err := a.WriteBytes(ctx, data); err != nil {
			log.Fatal(err)
		}
	}
	t0 := time.Now()
	if _, err := s.Commit(ctx, "sharded", nil); err != nil {
		log.Fatal(err)
	}
	commitSharded := time.Since(t0)

	type result struct {
		d    time.Duration
		reqs int64
	}
	measure := func(open func(r store.Reader) (*zarr.Array, error)) result {
		var rs []result
		for range *reps {
			c := loader.NewCountingStore(slow{base, *latency})
			a, err := open(c)
			if err != nil {
				log.Fatal(err)
			}
			n0 := c.Requests()
			t := time.Now()
			got, _, err := a.ReadBytes(ctx)
			if err != nil {
				log.Fatal(err)
			}
			rs = append(rs, result{time.Since(t), c.Requests() - n0})
			if !bytes.Equal(got, data) {
				log.Fatal("read back differs")
			}
		}
		slices.SortFunc(rs, func(a, b result) int { return int(a.d - b.d) })
		return rs[len(rs)/2]
	}
	plain := measure(func(c store.Reader) (*zarr.Array, error) {
		return zarr.OpenArray(ctx, prefixedReader{c, "plain/"}, "sharded")
	})
	repo := measure(func(c store.Reader) (*zarr.Array, error) {
		r, err := icechunk.Open(ctx, prefixedReader{c, "repo/"})
		if err != nil {
			return nil, err
		}
		snap, err := r.CheckoutRef(ctx, "main")
		if err != nil {
			return nil, err
		}
		return zarr.OpenArray(ctx, snap, "sharded")
	})
	mib := float64(len(data)) / (1 << 20)
	fmt.Printf("sharded %d×%d float32 (%.0f MiB), latency %v, median of %d:\n", *side, *side, mib, *latency, *reps)
	fmt.Printf("  plain      %8.1f ms  %5d requests  %7.1f MiB/s\n", ms(plain.d), plain.reqs, mib/plain.d.Seconds())
	fmt.Printf("  icechunk   %8.1f ms  %5d requests  %7.1f MiB/s   ratio plain/icechunk time %.2f\n", ms(repo.d), repo.reqs, mib/repo.d.Seconds(), plain.d.Seconds()/repo.d.Seconds())
	fmt.Printf("  (the icechunk open's requests, repo + snapshot, come before the read and are not counted; commit took %.1f ms)\n", ms(commitSharded))

	// many refs
	s, err = r.Session(ctx, "main", icechunk.WithManifestSplit(*split))
	if err != nil {
		log.Fatal(err)
	}
	rows := 1000
	cols := (*refs + rows - 1) / rows
	m2, err := zarr.NewArrayMetadata([]int{rows, cols}, dtype.TypeUint8, []int{1, 1})
	if err != nil {
		log.Fatal(err)
	}
	if _, err := zarr.CreateArray(ctx, s, "many", m2); err != nil {
		log.Fatal(err)
	}
	t0 = time.Now()
	for i := range rows {
		for j := range cols {
			if err := s.Set(ctx, fmt.Sprintf("many/c/%d/%d", i, j), []byte{byte(i + j)}); err != nil {
				log.Fatal(err)
			}
		}
	}
	set := time.Since(t0)
	t0 = time.Now()
	if _, err := s.Commit(ctx, "many refs", nil); err != nil {
		log.Fatal(err)
	}
	commitMany := time.Since(t0)
	var manifestBytes int64
	for k, err := range base.List(ctx, "repo/manifests/") {
		if err != nil {
			log.Fatal(err)
		}
		b, _ := base.Get(ctx, k, store.Full())
		manifestBytes += int64(len(b))
	}
	c := loader.NewCountingStore(base)
	r2, err := icechunk.Open(ctx, prefixedReader{c, "repo/"})
	if err != nil {
		log.Fatal(err)
	}
	snap, err := r2.CheckoutRef(ctx, "main")
	if err != nil {
		log.Fatal(err)
	}
	a, err := zarr.OpenArray(ctx, snap, "many")
	if err != nil {
		log.Fatal(err)
	}
	got, _, err := a.ReadBytes(ctx, ndAt(rows/2), ndAt(cols/3))
	if err != nil || got[0] != byte(rows/2+cols/3) {
		log.Fatalf("one chunk: %v %v", got, err)
	}
	st := r2.CacheStats()
	fmt.Printf("many: %d×%d = %d inline refs in manifests of %d refs: Set %.1f s, commit %.1f s\n", rows, cols, rows*cols, *split, set.Seconds(), commitMany.Seconds())
	fmt.Printf("  open + checkout + one chunk: %d requests, %.1f KiB fetched (all manifests of the repository: %.1f MiB)\n", c.Requests(), float64(c.Bytes())/1024, float64(manifestBytes)/(1<<20))
	fmt.Printf("  cache: %d objects, %.1f KiB, %d refs held, %.1f B per ref\n", st.Objects, float64(st.Bytes)/1024, st.ChunkRefs, st.BytesPerRef())
	var n atomic.Int64
	for _, err := range snap.List(ctx, "many/") {
		if err != nil {
			log.Fatal(err)
		}
		n.Add(1)
	}
	st = r2.CacheStats()
	fmt.Printf("  after listing %d keys: %d objects, %.1f MiB, %d refs held, %.1f B per ref (inline refs hold their 1-byte chunk)\n", n.Load(), st.Objects, float64(st.Bytes)/(1<<20), st.ChunkRefs, st.BytesPerRef())
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func putF32(b []byte, v float32) {
	u := math.Float32bits(v)
	b[0], b[1], b[2], b[3] = byte(u), byte(u>>8), byte(u>>16), byte(u>>24)
}

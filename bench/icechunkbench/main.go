// Command icechunkbench measures Icechunk repositories in gozarr against
// plain Zarr and against the official Icechunk core, in one run:
//
//		go run ./bench/icechunkbench                 # ~5 min on 2 loaded cores, 4.3 GB resident
//		go run ./bench/icechunkbench -side 4096 -refs 100000 -reps 1   # ~30 s
//
//	  - commit: -commit chunks of -commit-size bytes set in one session and
//	    committed into a new repository on the local filesystem (spec 1 and
//	    2), by gozarr and by the official core (node, commit.mjs, in -js or
//	    $ICECHUNK_JS); medians of -reps and their ratio.
//	  - s3: a -side² float32 array (16384²: 1 GiB; zstd level 1 inner chunks
//	    of 256² in shards of 2048²) stored on an in-process fake S3 server
//	    (gofakes3, loopback HTTP) both as plain Zarr and committed into an
//	    Icechunk repository, each read whole through store/s3 with -latency
//	    added to every request (-conc in flight), opened afresh each time;
//	    medians of -reps (after a warm-up), requests counted at the HTTP
//	    client, and the throughput ratio.
//	  - many: an array of -refs native (-inline: inline) chunk refs committed in manifests
//	    split every -split refs; then a fresh open of the repository, a
//	    checkout of main and a read of one chunk: the requests and bytes it
//	    fetched against the manifests' total, and the cache's bytes per ref
//	    held; then every manifest loaded (a listing), and bytes per ref again.
//
// The many-refs repository starts as a copy of testdata/icechunk/spec2 (the
// core's, with history). Every read is checked against what was written.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"math"
	"os"
	"path/filepath"
	"runtime/pprof"
	"sync/atomic"
	"time"

	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/internal/cputime"
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
	side := flag.Int("side", 16384, "side of the sharded float32 array read from the fake S3 server (16384: 1 GiB; 0: skip)")
	conc := flag.Int("conc", 64, "requests in flight to the fake S3 server")
	refs := flag.Int("refs", 1_000_000, "chunk refs of the many-refs array (0: skip)")
	split := flag.Int("split", 10_000, "refs per manifest")
	latency := flag.Duration("latency", 20*time.Millisecond, "latency added to every read")
	reps := flag.Int("reps", 3, "repetitions of each read")
	fixture := flag.String("fixture", "testdata/icechunk/spec2", "repository to start from")
	inline := flag.Bool("inline", false, "the many refs inline (else native: chunks/ objects)")
	commitN := flag.Int("commit", 1000, "chunks of the commit benchmark (0: skip)")
	commitSize := flag.Int("commit-size", 4096, "bytes per chunk of the commit benchmark")
	js := flag.String("js", os.Getenv("ICECHUNK_JS"), "the official core's install (../shared/tools/icechunk/setup.sh DIR) for the commit benchmark")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the many-refs Set and commit to this file")
	flag.Parse()
	ctx := context.Background()
	if *commitN > 0 {
		for _, spec := range []int{1, 2} {
			if err := benchCommit(ctx, *js, *commitN, *commitSize, spec, *reps); err != nil {
				log.Fatal(err)
			}
		}
	}
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

	if *side > 0 {
		if err := benchS3(ctx, *side, *latency, *reps, *conc); err != nil {
			log.Fatal(err)
		}
	}
	if *refs <= 0 {
		return
	}
	r, err := icechunk.Open(ctx, repoStore)
	if err != nil {
		log.Fatal(err)
	}

	// many refs
	kind, threshold := "native", 0
	if *inline {
		kind, threshold = "inline", 512
	}
	s, err := r.Session(ctx, "main", icechunk.WithManifestSplit(*split), icechunk.WithInlineThreshold(threshold))
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
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			log.Fatal(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			log.Fatal(err)
		}
	}
	cpu0 := cputime.Process()
	t0 := time.Now()
	for i := range rows {
		for j := range cols {
			if err := s.Set(ctx, fmt.Sprintf("many/c/%d/%d", i, j), []byte{byte(i + j)}); err != nil {
				log.Fatal(err)
			}
		}
	}
	set := time.Since(t0)
	cpuSet := cputime.Process() - cpu0
	t0 = time.Now()
	if _, err := s.Commit(ctx, "many refs", nil); err != nil {
		log.Fatal(err)
	}
	commitMany := time.Since(t0)
	cpuCommit := cputime.Process() - cpu0 - cpuSet
	if *cpuprofile != "" {
		pprof.StopCPUProfile()
	}
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
	fmt.Printf("many: %d×%d = %d %s refs (one-byte chunks) in manifests of %d refs: Set %.1f s wall (%.1f s CPU), commit %.1f s wall (%.1f s CPU)\n", rows, cols, rows*cols, kind, *split, set.Seconds(), cpuSet.Seconds(), commitMany.Seconds(), cpuCommit.Seconds())
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
	fmt.Printf("  after listing %d keys: %d objects, %.1f MiB, %d refs held, %.1f B per ref\n", n.Load(), st.Objects, float64(st.Bytes)/(1<<20), st.ChunkRefs, st.BytesPerRef())
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func putF32(b []byte, v float32) {
	u := math.Float32bits(v)
	b[0], b[1], b[2], b[3] = byte(u), byte(u>>8), byte(u>>16), byte(u>>24)
}

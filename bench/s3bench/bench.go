package main

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/pipeline"
	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/objstore"
	"github.com/gozarr/gozarr/store/s3"
	"github.com/gozarr/gozarr/store/s3/s3test"
	"github.com/gozarr/gozarr/zarr"
)

// arrayPath is the array's node path under the run's key prefix.
const arrayPath = "bench.zarr"

// result is one row of the report: the median of a row's runs.
type result struct {
	server    string
	workload  string
	latency   time.Duration
	conc      int
	requests  int   // every HTTP request
	suffix    int   // GETs with a suffix range (shard indexes)
	ranged    int   // GETs with a bounded range (inner chunks)
	full      int   // GETs without a range (whole shards)
	fetched   int64 // response body bytes
	out       int64 // bytes of array data delivered
	wall      time.Duration
	clientCPU time.Duration
	serverCPU time.Duration // -1 when unknown
}

// floor is ceil(requests ÷ conc) × latency.
func (r result) floor() time.Duration {
	return time.Duration((r.requests+r.conc-1)/r.conc) * r.latency
}

// benchTarget writes the array to tg and runs every row against it. It
// returns the rows and a note on the write.
func benchTarget(ctx context.Context, cfg config, tg *target, data []byte, startProfile func()) ([]result, string, error) {
	prefix := fmt.Sprintf("s3bench-%d", time.Now().UnixNano())
	rec := s3test.NewRecorder(transport(objstore.DefaultConcurrency))
	wst, err := s3.Open(ctx, tg.srv.Bucket, prefix, tg.srv.Options(s3.WithHTTPClient(rec.Client()))...)
	if err != nil {
		return nil, "", err
	}
	meta, err := arrayMetadata(cfg.n, cfg.shard, cfg.inner, cfg.seed)
	if err != nil {
		return nil, "", err
	}
	t0 := time.Now()
	a, err := zarr.CreateArray(ctx, wst, arrayPath, meta)
	if err != nil {
		return nil, "", err
	}
	if err := a.WriteBytes(ctx, data); err != nil {
		return nil, "", err
	}
	wtime := time.Since(t0)
	wreqs, wputs := rec.Count(""), rec.Count("PUT")
	var stored int64
	for key, err := range wst.List(ctx, arrayPath+"/") {
		if err != nil {
			return nil, "", err
		}
		n, err := wst.Size(ctx, key)
		if err != nil {
			return nil, "", err
		}
		stored += n
	}
	note := fmt.Sprintf("%s at %s: wrote s3://%s/%s/%s in %.2f s with %d requests (%d PUTs); %.1f MiB stored (%.2f× compression)",
		tg.name, tg.srv.Endpoint, tg.srv.Bucket, prefix, arrayPath, wtime.Seconds(), wreqs, wputs,
		float64(stored)/(1<<20), float64(len(data))/float64(max(stored, 1)))
	if !cfg.keep {
		defer cleanup(ctx, wst)
	}
	mid := (cfg.n + cfg.shard - 1) / cfg.shard / 2
	shardKey := a.ChunkKey([]int{mid, mid})
	shardObj, err := wst.Get(ctx, shardKey, store.Full())
	if err != nil {
		return nil, "", err
	}
	startProfile()

	var results []result
	for _, lat := range cfg.latencies {
		for _, conc := range cfg.concs {
			rs, err := benchStore(ctx, cfg, tg, prefix, lat, conc, data, shardKey, shardObj)
			if err != nil {
				return nil, "", fmt.Errorf("latency %v, concurrency %d: %w", lat, conc, err)
			}
			results = append(results, rs...)
		}
	}
	return results, note, nil
}

// cleanup deletes the run's objects.
func cleanup(ctx context.Context, st *s3.Store) {
	var keys []string
	for key, err := range st.List(ctx, "") {
		if err != nil {
			fmt.Fprintln(os.Stderr, "s3bench: cleanup:", err)
			return
		}
		keys = append(keys, key)
	}
	for _, k := range keys {
		if err := st.Delete(ctx, k); err != nil {
			fmt.Fprintln(os.Stderr, "s3bench: cleanup:", err)
		}
	}
}

// benchStore runs every workload through a store with latency lat and
// request limit conc.
func benchStore(ctx context.Context, cfg config, tg *target, prefix string, lat time.Duration, conc int, data []byte, shardKey string, shardObj []byte) ([]result, error) {
	counter := &countingTransport{next: s3test.Latency(transport(conc), lat), trace: cfg.trace}
	rec := s3test.NewRecorder(counter)
	st, err := s3.Open(ctx, tg.srv.Bucket, prefix, tg.srv.Options(s3.WithHTTPClient(rec.Client()), s3.WithConcurrency(conc))...)
	if err != nil {
		return nil, err
	}
	popt := zarr.WithPipeline(pipeline.Options{IOConcurrency: conc})
	var out []result
	for _, w := range cfg.workloads {
		wl := newWorkload(w, cfg, data, shardKey, shardObj)
		var runs []result
		for rep := range cfg.reps + 1 {
			a, err := zarr.OpenArray(ctx, st, arrayPath, popt)
			if err != nil {
				return nil, err
			}
			wl.reset()
			rec.Reset()
			counter.reset()
			cpu0 := selfCPU()
			srv0, srvOK := procCPU(tg.pid)
			start := time.Now()
			if err := wl.run(ctx, a, st, conc); err != nil {
				return nil, fmt.Errorf("%s: %w", w, err)
			}
			wall := time.Since(start)
			r := result{server: tg.name, workload: w, latency: lat, conc: conc, wall: wall,
				clientCPU: selfCPU() - cpu0, serverCPU: -1, out: wl.bytes(), fetched: counter.bytes.Load()}
			if srv1, ok := procCPU(tg.pid); ok && srvOK {
				r.serverCPU = srv1 - srv0
			}
			for _, q := range rec.Requests("") {
				r.requests++
				switch {
				case q.Method != "GET":
				case strings.HasPrefix(q.Range, "bytes=-"):
					r.suffix++
				case q.Range != "":
					r.ranged++
				default:
					r.full++
				}
			}
			if err := wl.verify(); err != nil {
				return nil, fmt.Errorf("%s: %w", w, err)
			}
			if cfg.trace {
				fmt.Fprintf(os.Stderr, "s3bench: trace %s latency=%v conc=%d %s run %d: %v, %d requests (GETs s/r/f %d/%d/%d) %s\n",
					tg.name, lat, conc, w, rep, wall.Round(time.Millisecond), r.requests, r.suffix, r.ranged, r.full, counter.timeline(lat))
			}
			if rep > 0 { // the first run warms connections up
				runs = append(runs, r)
			}
		}
		slices.SortFunc(runs, func(x, y result) int { return int(x.wall - y.wall) })
		out = append(out, runs[len(runs)/2])
		fmt.Fprintf(os.Stderr, "s3bench: %s latency=%v conc=%d %s: %v, %d requests\n", tg.name, lat, conc, w, runs[len(runs)/2].wall.Round(time.Millisecond), runs[len(runs)/2].requests)
	}
	return out, nil
}

// workload is one kind of read, with its output buffers and checks.
type workload struct {
	name  string
	n     int
	data  []byte
	boxes []box    // regions read, one ReadBytesInto each
	bufs  [][]byte // one per box or probe

	// The probe workload: ranged GETs of one shard object straight
	// through the store, no zarr.
	shardKey string
	shardObj []byte
	probes   []span
}

// span is n bytes at off.
type span struct{ off, n int }

// probeSize is the length of each probe GET.
const probeSize = 4096

// box is rows [r0, r0+h) × columns [c0, c0+w).
type box struct{ r0, c0, h, w int }

func newWorkload(name string, cfg config, data []byte, shardKey string, shardObj []byte) *workload {
	wl := &workload{name: name, n: cfg.n, data: data}
	switch name {
	case "probe":
		wl.shardKey, wl.shardObj = shardKey, shardObj
		rng := rand.New(rand.NewPCG(cfg.seed, 0x9b0be))
		for range cfg.random {
			n := min(probeSize, len(shardObj))
			wl.probes = append(wl.probes, span{off: rng.IntN(len(shardObj) - n + 1), n: n})
		}
		for _, p := range wl.probes {
			wl.bufs = append(wl.bufs, make([]byte, p.n))
		}
		return wl
	case "all":
		wl.boxes = []box{{0, 0, cfg.n, cfg.n}}
	case "shard":
		ns := (cfg.n + cfg.shard - 1) / cfg.shard
		r0 := ns / 2 * cfg.shard
		wl.boxes = []box{{r0, r0, min(cfg.shard, cfg.n-r0), min(cfg.shard, cfg.n-r0)}}
	case "random":
		ni := (cfg.n + cfg.inner - 1) / cfg.inner
		total := ni * ni
		rng := rand.New(rand.NewPCG(cfg.seed, 0x5eed))
		perm := rng.Perm(total)
		for k := range cfg.random {
			// Distinct chunks while there are enough; then again from the start.
			c := perm[k%total]
			r0, c0 := c/ni*cfg.inner, c%ni*cfg.inner
			wl.boxes = append(wl.boxes, box{r0, c0, min(cfg.inner, cfg.n-r0), min(cfg.inner, cfg.n-c0)})
		}
	}
	for _, b := range wl.boxes {
		wl.bufs = append(wl.bufs, make([]byte, b.h*b.w*4))
	}
	return wl
}

// reset clears the output buffers, so a read that writes nothing fails
// verification.
func (wl *workload) reset() {
	for _, b := range wl.bufs {
		clear(b)
	}
}

// bytes returns the array bytes one run delivers.
func (wl *workload) bytes() int64 {
	var n int64
	for _, b := range wl.bufs {
		n += int64(len(b))
	}
	return n
}

// run reads every box, with up to conc ReadBytesInto calls at once (or, for
// the probe workload, makes every GET through st, conc at a time).
func (wl *workload) run(ctx context.Context, a *zarr.Array, st *s3.Store, conc int) error {
	read := func(i int) error {
		if wl.probes != nil {
			p := wl.probes[i]
			b, err := st.Get(ctx, wl.shardKey, store.OffsetLen(int64(p.off), int64(p.n)))
			copy(wl.bufs[i], b)
			return err
		}
		b := wl.boxes[i]
		return a.ReadBytesInto(ctx, wl.bufs[i], nd.Range(b.r0, b.r0+b.h), nd.Range(b.c0, b.c0+b.w))
	}
	if len(wl.bufs) == 1 {
		return read(0)
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make([]error, min(conc, len(wl.bufs)))
	for g := range errs {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= len(wl.bufs) || errs[g] != nil {
					return
				}
				errs[g] = read(i)
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// verify compares every buffer with the written data.
func (wl *workload) verify() error {
	if wl.name == "probe" {
		for i, b := range wl.probes {
			if !bytes.Equal(wl.bufs[i], wl.shardObj[b.off:b.off+b.n]) {
				return fmt.Errorf("%w: bytes [%d, %d) of %s", errMismatch, b.off, b.off+b.n, wl.shardKey)
			}
		}
		return nil
	}
	for i, b := range wl.boxes {
		got := wl.bufs[i]
		for r := range b.h {
			want := wl.data[((b.r0+r)*wl.n+b.c0)*4 : ((b.r0+r)*wl.n+b.c0+b.w)*4]
			if !bytes.Equal(got[r*b.w*4:(r+1)*b.w*4], want) {
				return fmt.Errorf("%w: row %d, columns [%d, %d)", errMismatch, b.r0+r, b.c0, b.c0+b.w)
			}
		}
	}
	return nil
}

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
func benchTarget(ctx context.Context, cfg config, tg *target, data []byte) ([]result, string, error) {
	prefix := fmt.Sprintf("s3bench-%d", time.Now().UnixNano())
	rec := s3test.NewRecorder(transport(s3.DefaultConcurrency))
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

	var results []result
	for _, lat := range cfg.latencies {
		for _, conc := range cfg.concs {
			rs, err := benchStore(ctx, cfg, tg, prefix, lat, conc, data)
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
func benchStore(ctx context.Context, cfg config, tg *target, prefix string, lat time.Duration, conc int, data []byte) ([]result, error) {
	counter := &countingTransport{next: s3test.Latency(transport(conc), lat)}
	rec := s3test.NewRecorder(counter)
	st, err := s3.Open(ctx, tg.srv.Bucket, prefix, tg.srv.Options(s3.WithHTTPClient(rec.Client()), s3.WithConcurrency(conc))...)
	if err != nil {
		return nil, err
	}
	popt := zarr.WithPipeline(pipeline.Options{IOConcurrency: conc})
	var out []result
	for _, w := range cfg.workloads {
		wl := newWorkload(w, cfg, data)
		var runs []result
		for rep := range cfg.reps + 1 {
			a, err := zarr.OpenArray(ctx, st, arrayPath, popt)
			if err != nil {
				return nil, err
			}
			wl.reset()
			rec.Reset()
			counter.bytes.Store(0)
			cpu0 := selfCPU()
			srv0, srvOK := procCPU(tg.pid)
			start := time.Now()
			if err := wl.run(ctx, a, conc); err != nil {
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
	boxes []box    // regions read, one ReadBytes each
	bufs  [][]byte // one per box
}

// box is rows [r0, r0+h) × columns [c0, c0+w).
type box struct{ r0, c0, h, w int }

func newWorkload(name string, cfg config, data []byte) *workload {
	wl := &workload{name: name, n: cfg.n, data: data}
	switch name {
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

// run reads every box, with up to conc ReadBytes calls at once.
func (wl *workload) run(ctx context.Context, a *zarr.Array, conc int) error {
	read := func(i int) error {
		b := wl.boxes[i]
		return a.ReadBytes(ctx, wl.bufs[i], nd.Range(b.r0, b.r0+b.h), nd.Range(b.c0, b.c0+b.w))
	}
	if len(wl.boxes) == 1 {
		return read(0)
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make([]error, min(conc, len(wl.boxes)))
	for g := range errs {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= len(wl.boxes) || errs[g] != nil {
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
	for i, b := range wl.boxes {
		if !bytes.Equal(wl.bufs[i], region(wl.data, wl.n, b.r0, b.c0, b.h, b.w)) {
			return fmt.Errorf("%w: rows [%d, %d) × columns [%d, %d)", errMismatch, b.r0, b.r0+b.h, b.c0, b.c0+b.w)
		}
	}
	return nil
}

// Command zarrbeambench measures how zarrbeam's re-encode scales with the
// number of workers: the same rechunk (an 8192² uint8 array of 512² chunks
// into 2048² shards of 1024² inner chunks, zstd, on the S3 server of
// .ci/s3server.sh with a latency added to every request) run by 1, 2 and 4
// worker processes, each a prism job in its own process on its part of
// the array (parts are whole write regions, so no shard has two writers).
//
//	eval "$(bash .ci/s3server.sh start)"
//	go run ./cmd/zarrbeambench -workers 1,2,4 -latency 20ms
//
// It reports, per worker count, the wall time, the throughput (source MB
// per second), per worker, the workers' and the S3 server's CPU time (and
// so how many cores were busy on average), and two limits measured
// in the same run: the codec floor (decode every source chunk and encode
// every shard in this process on every core, memory to memory) and the
// request floor (each worker's requests at the S3 store's concurrency
// times the latency). Every output is checked equal to the source.
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners/prism"
	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/store/mem"
	"github.com/gozarr/gozarr/store/s3"
	"github.com/gozarr/gozarr/store/s3/s3test"
	"github.com/gozarr/gozarr/store/storeurl"
	"github.com/gozarr/gozarr/zarr"
	"github.com/gozarr/gozarr/zarrbeam"
)

var (
	size     = flag.Int("size", 8192, "array side (uint8, size² elements)")
	workers  = flag.String("workers", "1,2,4", "worker process counts to run")
	latency  = flag.Duration("latency", 20*time.Millisecond, "delay added to every S3 request of the workers")
	maxMem   = flag.Int64("max-mem", 16<<20, "zarrbeam.RechunkOptions.MaxMem")
	prefix   = flag.String("prefix", "zarrbeambench", "key prefix on the S3 server (the arrays a run writes there replace an earlier run's)")
	srvPID   = flag.String("server-pid", "", "file holding the S3 server's process id, for its CPU time (default: $GOZARR_S3_STATE/pid, else /tmp/gozarr-s3/pid; none if absent)")
	worker   = flag.Bool("as-worker", false, "internal: run as worker -part of the job")
	part     = flag.String("part", "", "internal: the worker's box (NumPy syntax)")
	src, dst = flag.String("src", "", "internal: source URL"), flag.String("dst", "", "internal: destination URL")
)

const (
	srcChunk = 512
	shard    = 2048
	inner    = 1024
)

func main() {
	flag.Parse()
	beam.Init()
	var err error
	if *worker {
		err = runWorker(context.Background())
	} else {
		err = run(context.Background())
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "zarrbeambench:", err)
		os.Exit(1)
	}
}

func server() (*s3test.Server, error) {
	srv, ok := s3test.LookupEnv()
	if !ok {
		return nil, errors.New("no S3 server in the environment: eval \"$(bash .ci/s3server.sh start)\" first")
	}
	return srv, nil
}

// runWorker rechunks the worker's part with every S3 request delayed.
func runWorker(ctx context.Context) error {
	srv, err := server()
	if err != nil {
		return err
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns, tr.MaxIdleConnsPerHost = 256, 256
	zarrbeam.SetStoreOptions(storeurl.WithS3(srv.Options(s3.WithHTTPClient(&http.Client{Transport: s3test.Latency(tr, *latency)}))...))
	p, s := beam.NewPipelineWithRoot()
	zarrbeam.Rechunk(s, zarrbeam.Ref{URL: *src}, zarrbeam.Ref{URL: *dst}, zarrbeam.RechunkOptions{MaxMem: *maxMem, Selection: *part})
	_, err = prism.Execute(ctx, p)
	return err
}

func pattern(n, side int) []byte {
	b := make([]byte, n)
	x := uint32(1)
	for i := range b {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		r, c := i/side, i%side
		b[i] = byte((r/7+c/5)&0xf8) | byte(x&7)
	}
	return b
}

func run(ctx context.Context) error {
	srv, err := server()
	if err != nil {
		return err
	}
	n := *size
	shape := []int{n, n}
	data := pattern(n*n, n)
	base := fmt.Sprintf("%s/%d", *prefix, n)
	open := func(p string) (*s3.Store, error) { return s3.Open(ctx, srv.Bucket, base+"/"+p, srv.Options()...) }
	zs, _ := codecs.NewZstd(1, false)
	srcMeta, _ := zarr.NewArrayMetadata(shape, dtype.TypeUint8, []int{srcChunk, srcChunk}, zarr.Compress(zs))
	zs3, _ := codecs.NewZstd(3, false)
	dstMeta, _ := zarr.NewArrayMetadata(shape, dtype.TypeUint8, []int{inner, inner}, zarr.Shards(shard, shard), zarr.Compress(zs3))

	// The source, written once without latency. It and the outputs replace
	// what an earlier run left under the prefix, so a second run works.
	srcSt, err := open("src")
	if err != nil {
		return err
	}
	a, err := zarr.CreateArray(ctx, srcSt, "", srcMeta, zarr.Overwrite())
	if err != nil {
		return err
	}
	if err := a.WriteBytes(ctx, data); err != nil {
		return err
	}

	// The codec floor: the same re-encode memory to memory, all cores.
	memSt := mem.New()
	ma, _ := zarr.CreateArray(ctx, memSt, "src", srcMeta)
	if err := ma.WriteBytes(ctx, data); err != nil {
		return err
	}
	mb, _ := zarr.CreateArray(ctx, memSt, "dst", dstMeta)
	t0 := time.Now()
	buf, _, err := ma.ReadBytes(ctx)
	if err != nil {
		return err
	}
	if err := mb.WriteBytes(ctx, buf); err != nil {
		return err
	}
	floor := time.Since(t0)

	plan, err := zarrbeam.PlanRechunk(shape, []int{srcChunk, srcChunk}, []int{shard, shard}, 1, *maxMem)
	if err != nil {
		return err
	}
	rows := (n + plan.Write[0] - 1) / plan.Write[0]
	mb64 := float64(n*n) / 1e6
	fmt.Printf("re-encode %d² uint8 (%.0f MB), %d² chunks → %d² shards of %d² inner chunks, zstd; S3 +%v per request; max-mem %d MiB: read regions %v, write regions %v (%d rows of them); GOMAXPROCS %d\n\n",
		n, mb64, srcChunk, shard, inner, *latency, *maxMem>>20, plan.Read, plan.Write, rows, runtime.GOMAXPROCS(0))
	fmt.Printf("codec floor (memory to memory, this process, all cores): %.0f ms, %.0f MB/s\n\n", ms(floor), mb64/floor.Seconds())
	fmt.Println("| workers | wall ms | MB/s | MB/s per worker | speed-up | workers' CPU ms | server CPU ms | cores busy | wall / codec floor | request floor ms |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|")
	var first time.Duration
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	for _, f := range strings.Split(*workers, ",") {
		w, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || w < 1 {
			return fmt.Errorf("-workers %q: want positive counts", *workers)
		}
		dp := fmt.Sprintf("dst-%d", w)
		dstSt, err := open(dp)
		if err != nil {
			return err
		}
		if _, err := zarr.CreateArray(ctx, dstSt, "", dstMeta, zarr.Overwrite()); err != nil {
			return err
		}
		srcURL := fmt.Sprintf("s3://%s/%s/src", srv.Bucket, base)
		dstURL := fmt.Sprintf("s3://%s/%s/%s", srv.Bucket, base, dp)
		cmds := make([]*exec.Cmd, w)
		srv0 := serverCPU()
		t0 := time.Now()
		for i := range w {
			lo, hi := i*rows/w*plan.Write[0], min(n, (i+1)*rows/w*plan.Write[0])
			c := exec.CommandContext(ctx, exe, "-as-worker", "-src", srcURL, "-dst", dstURL,
				"-part", fmt.Sprintf("%d:%d, :", lo, hi), "-latency", latency.String(), "-max-mem", strconv.FormatInt(*maxMem, 10))
			var out bytes.Buffer
			c.Stdout, c.Stderr = &out, &out
			if err := c.Start(); err != nil {
				return err
			}
			cmds[i] = c
			defer func() {
				if c.ProcessState == nil || !c.ProcessState.Success() {
					os.Stderr.Write(out.Bytes())
				}
			}()
		}
		var cpu time.Duration
		for _, c := range cmds {
			if err := c.Wait(); err != nil {
				return fmt.Errorf("%d workers: %w", w, err)
			}
			cpu += c.ProcessState.UserTime() + c.ProcessState.SystemTime()
		}
		wall := time.Since(t0)
		srvCPU := serverCPU() - srv0
		if first == 0 {
			first = wall
		}
		// Check the output.
		b, err := zarr.OpenArray(ctx, dstSt, "")
		if err != nil {
			return err
		}
		got, _, err := b.ReadBytes(ctx)
		if err != nil {
			return err
		}
		if !bytes.Equal(got, data) {
			return fmt.Errorf("%d workers: output differs from the source", w)
		}
		// Requests per worker: its source chunks (GETs) and its shards
		// (PUTs), at the store's concurrency of 64, each one latency.
		gets := (n / srcChunk) * (n / srcChunk) / w
		puts := (n / shard) * (n / shard) / w
		reqFloor := time.Duration((gets+63)/64+(puts+63)/64) * *latency
		fmt.Printf("| %d | %.0f | %.0f | %.0f | %.2f | %.0f | %.0f | %.2f | %.1f | %.0f |\n", w, ms(wall), mb64/wall.Seconds(),
			mb64/wall.Seconds()/float64(w), first.Seconds()/wall.Seconds(), ms(cpu), ms(srvCPU),
			(cpu+srvCPU).Seconds()/wall.Seconds(), wall.Seconds()/floor.Seconds(), ms(reqFloor))
	}
	return nil
}

// serverCPU returns the S3 server's CPU time so far (user and system,
// from /proc), 0 when its process is not known.
func serverCPU() time.Duration {
	file := *srvPID
	if file == "" {
		file = "/tmp/gozarr-s3/pid"
		if d := os.Getenv("GOZARR_S3_STATE"); d != "" {
			file = d + "/pid"
		}
	}
	pid, err := os.ReadFile(file)
	if err != nil {
		return 0
	}
	stat, err := os.ReadFile("/proc/" + strings.TrimSpace(string(pid)) + "/stat")
	if err != nil {
		return 0
	}
	// Fields after the command's closing parenthesis: utime and stime are
	// the 12th and 13th, in clock ticks (100 per second on Linux).
	f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	k, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(u+k) * 10 * time.Millisecond
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

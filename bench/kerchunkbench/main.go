// Command kerchunkbench reads a NetCDF-4 variable (zlib + shuffle chunks)
// whole through kerchunk references, the way issue 28's benchmark asks,
// against h5py and netCDF4 reading the same variable in the same run:
//
//   - gozarr's own references: the file virtualized by package hdf5 (the
//     time of that is printed too), read through store/kerchunk from local
//     disk;
//   - the same references with the file on gozarr's fake S3 (gofakes3 over
//     loopback HTTP, in this process) with a latency added to every request;
//   - optionally (-h5py-refs) the references make_bench.py made from h5py's
//     chunk addresses, from local disk;
//   - h5py and netCDF4 (make_bench.py time, in the reference chroot).
//
// Rounds are interleaved (peers, then gozarr local, then S3) so that the
// machine's load falls on all alike; each figure is the median over the
// rounds of wall time, with the process CPU time of the same reads. Ratios
// are to h5py's median of the same run. Make the data first (1 GiB: ~2
// minutes), from the repository root:
//
//	../shared/tools/zarr-python bench/kerchunkbench/make_bench.py gen /tmp/kbench1g 1024
//	go run ./bench/kerchunkbench -dir /tmp/kbench1g -rounds 3
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"sync/atomic"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/gozarr/gozarr/hdf5"
	"github.com/gozarr/gozarr/internal/cputime"
	"github.com/gozarr/gozarr/store/fs"
	"github.com/gozarr/gozarr/store/kerchunk"
	"github.com/gozarr/gozarr/store/mem"
	"github.com/gozarr/gozarr/store/s3"
	"github.com/gozarr/gozarr/store/s3/s3test"
	"github.com/gozarr/gozarr/store/storeurl"
	"github.com/gozarr/gozarr/store/virtual"
	"github.com/gozarr/gozarr/zarr"
)

type sample struct{ wall, cpu time.Duration }

type series struct {
	name string
	s    []sample
}

func (s *series) median() sample {
	w := make([]sample, len(s.s))
	copy(w, s.s)
	slices.SortFunc(w, func(a, b sample) int { return int(a.wall - b.wall) })
	return w[len(w)/2]
}

// countingTransport counts the requests it forwards.
type countingTransport struct {
	next http.RoundTripper
	n    atomic.Int64
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return c.next.RoundTrip(r)
}

func main() {
	dir := flag.String("dir", "/tmp/kbench1g", "the directory make_bench.py gen wrote")
	name := flag.String("var", "temp", "the variable")
	rounds := flag.Int("rounds", 3, "rounds (each: the peers, gozarr local, gozarr on S3)")
	latency := flag.Duration("latency", 20*time.Millisecond, "latency added to every S3 request")
	python := flag.String("python", "../shared/tools/zarr-python", "the reference chroot's python (\"\" skips the peers)")
	withS3 := flag.Bool("s3", true, "also read from the fake S3 server")
	h5pyRefs := flag.Bool("h5py-refs", false, "also read through make_bench.py's references (h5py's chunk addresses)")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the gozarr reads to this file")
	flag.Parse()
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			log.Fatal(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			log.Fatal(err)
		}
		defer pprof.StopCPUProfile()
	}
	ctx := context.Background()
	nc := filepath.Join(*dir, "bench.nc")
	info, err := os.Stat(nc)
	if err != nil {
		log.Fatalf("%v (make it: ../shared/tools/zarr-python bench/kerchunkbench/make_bench.py gen %s 1024)", err, *dir)
	}
	local, err := fs.New(*dir, fs.ReadOnly())
	if err != nil {
		log.Fatal(err)
	}

	// Virtualize: gozarr's references to the file, twice (the second is
	// the figure: the page cache is warm for both).
	abs, _ := filepath.Abs(nc)
	virtualize := func(url string) ([]byte, time.Duration, int) {
		var best time.Duration
		var doc bytes.Buffer
		chunks := 0
		for i := range 2 {
			t0 := time.Now()
			f, err := hdf5.Open(ctx, local, "bench.nc")
			if err != nil {
				log.Fatal(err)
			}
			refs, err := hdf5.References(ctx, f, hdf5.RefsOptions{URL: url})
			if err != nil {
				log.Fatal(err)
			}
			doc.Reset()
			if err := refs.WriteJSON(&doc); err != nil {
				log.Fatal(err)
			}
			if d := time.Since(t0); i == 0 || d < best {
				best = d
			}
			chunks = len(refs.Refs)
		}
		return bytes.Clone(doc.Bytes()), best, chunks
	}
	localDoc, vt, nrefs := virtualize(abs)
	fmt.Printf("virtualize %s (%d MiB, %d keys): %v (best of 2)\n", nc, info.Size()>>20, nrefs, vt.Round(time.Millisecond))

	open := func(doc []byte, opts ...kerchunk.Option) *zarr.Array {
		m := mem.New()
		if err := m.Set(ctx, "refs.json", doc); err != nil {
			log.Fatal(err)
		}
		ks, err := kerchunk.Open(ctx, m, "refs.json", opts...)
		if err != nil {
			log.Fatal(err)
		}
		a, err := zarr.OpenArray(ctx, ks, *name)
		if err != nil {
			log.Fatal(err)
		}
		return a
	}
	var out []byte
	read := func(a *zarr.Array) sample {
		runtime.GC()
		t0, c0 := time.Now(), cputime.Process()
		b, _, err := a.ReadBytes(ctx)
		if err != nil {
			log.Fatal(err)
		}
		s := sample{time.Since(t0), cputime.Process() - c0}
		out = b
		return s
	}
	localArr := open(localDoc, kerchunk.WithResolverOptions(virtual.AllowFile(abs)))
	var h5Arr *zarr.Array
	if *h5pyRefs {
		ks, err := kerchunk.Open(ctx, local, "bench.json")
		if err != nil {
			log.Fatal(err)
		}
		if h5Arr, err = zarr.OpenArray(ctx, ks, *name); err != nil {
			log.Fatal(err)
		}
	}

	var s3Arr *zarr.Array
	var counter *countingTransport
	if *withS3 {
		backend := s3mem.New()
		const bucket = "kbench"
		if err := backend.CreateBucket(bucket); err != nil {
			log.Fatal(err)
		}
		ts := httptest.NewServer(gofakes3.New(backend).Server())
		defer ts.Close()
		srv := &s3test.Server{Endpoint: ts.URL, AccessKey: "test", SecretKey: "testsecret", Bucket: bucket, Region: "us-east-1"}
		w, err := s3.Open(ctx, bucket, "", srv.Options()...)
		if err != nil {
			log.Fatal(err)
		}
		data, err := os.ReadFile(nc)
		if err != nil {
			log.Fatal(err)
		}
		if err := w.Set(ctx, "bench.nc", data); err != nil {
			log.Fatalf("filling the fake S3 server: %v", err)
		}
		data = nil
		runtime.GC()
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.MaxIdleConns, tr.MaxIdleConnsPerHost = 64, 64
		counter = &countingTransport{next: s3test.Latency(tr, *latency)}
		client := &http.Client{Transport: counter}
		url := "s3://" + bucket + "/bench.nc"
		s3Doc := bytes.ReplaceAll(localDoc, []byte(`["`+abs+`",`), []byte(`["`+url+`",`))
		s3Arr = open(s3Doc, kerchunk.WithResolverOptions(virtual.AllowFile(url),
			virtual.WithStoreOptions(storeurl.WithS3(srv.Options(s3.WithHTTPClient(client))...))))
	}

	h5 := &series{name: "h5py"}
	n4 := &series{name: "netCDF4"}
	gl := &series{name: "gozarr, its references, local disk"}
	gh := &series{name: "gozarr, h5py's addresses, local disk"}
	gs := &series{name: fmt.Sprintf("gozarr, its references, fake S3 +%v/request", *latency)}
	var nbytes int64
	var s3Requests int64
	for r := range *rounds {
		if *python != "" {
			script, _ := filepath.Abs("bench/kerchunkbench/make_bench.py")
			cmd := exec.Command(*python, script, "time", *dir, "1")
			cmd.Stderr = os.Stderr
			b, err := cmd.Output()
			if err != nil {
				log.Fatalf("make_bench.py time: %v", err)
			}
			var p struct {
				H5    float64 `json:"h5py_s"`
				H5CPU float64 `json:"h5py_cpu_s"`
				N4    float64 `json:"netcdf4_s"`
				N4CPU float64 `json:"netcdf4_cpu_s"`
				Bytes int64   `json:"bytes"`
			}
			if err := json.Unmarshal(b, &p); err != nil {
				log.Fatalf("make_bench.py time printed %q: %v", b, err)
			}
			sec := func(f float64) time.Duration { return time.Duration(f * float64(time.Second)) }
			h5.s = append(h5.s, sample{sec(p.H5), sec(p.H5CPU)})
			n4.s = append(n4.s, sample{sec(p.N4), sec(p.N4CPU)})
			nbytes = p.Bytes
		}
		gl.s = append(gl.s, read(localArr))
		if int64(len(out)) != nbytes && nbytes != 0 {
			log.Fatalf("gozarr read %d bytes, h5py %d", len(out), nbytes)
		}
		nbytes = int64(len(out))
		if h5Arr != nil {
			gh.s = append(gh.s, read(h5Arr))
		}
		if s3Arr != nil {
			n0 := counter.n.Load()
			gs.s = append(gs.s, read(s3Arr))
			s3Requests = counter.n.Load() - n0
		}
		out = nil
		fmt.Printf("round %d done\n", r+1)
	}
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("%d MiB decoded, %d rounds, GOMAXPROCS %d, NumCPU %d, load %s", nbytes>>20, *rounds, runtime.GOMAXPROCS(0), runtime.NumCPU(), load)
	var ref time.Duration
	if len(h5.s) > 0 {
		ref = h5.median().wall
	}
	for _, s := range []*series{h5, n4, gl, gh, gs} {
		if len(s.s) == 0 {
			continue
		}
		m := s.median()
		line := fmt.Sprintf("  %-48s %7.2f s wall %7.2f s CPU  %6.0f MB/s", s.name, m.wall.Seconds(), m.cpu.Seconds(), float64(nbytes)/m.wall.Seconds()/1e6)
		if ref > 0 {
			line += fmt.Sprintf("  %.2fx h5py", ref.Seconds()/m.wall.Seconds())
		}
		if s == gs {
			line += fmt.Sprintf("  (%d requests)", s3Requests)
		}
		fmt.Println(line)
	}
}

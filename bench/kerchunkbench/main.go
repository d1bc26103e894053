// Command kerchunkbench reads a variable whole through kerchunk
// references (store/kerchunk, the pipeline's coalesced reads) and prints
// the best time of n reads and the throughput, for comparison with h5py
// reading the same file (make_bench.py prints its time):
//
//	../../../shared/tools/zarr-python make_bench.py /tmp/kbench 256
//	go run ./bench/kerchunkbench -refs /tmp/kbench/bench.json -var temp
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"path/filepath"
	"time"

	"github.com/gozarr/gozarr/store/fs"
	"github.com/gozarr/gozarr/store/kerchunk"
	"github.com/gozarr/gozarr/zarr"
)

func main() {
	refs := flag.String("refs", "", "the references file")
	name := flag.String("var", "temp", "the variable")
	n := flag.Int("n", 3, "reads")
	flag.Parse()
	ctx := context.Background()
	dir, err := fs.New(filepath.Dir(*refs), fs.ReadOnly())
	if err != nil {
		log.Fatal(err)
	}
	ks, err := kerchunk.Open(ctx, dir, filepath.Base(*refs))
	if err != nil {
		log.Fatal(err)
	}
	a, err := zarr.OpenArray(ctx, ks, *name)
	if err != nil {
		log.Fatal(err)
	}
	best := time.Duration(1 << 62)
	var size int
	for range *n {
		t0 := time.Now()
		b, _, err := a.ReadBytes(ctx)
		if err != nil {
			log.Fatal(err)
		}
		best = min(best, time.Since(t0))
		size = len(b)
	}
	fmt.Printf("{\"gozarr_s\": %.4f, \"bytes\": %d, \"GBps\": %.3f}\n", best.Seconds(), size, float64(size)/best.Seconds()/1e9)
}

// Command loader is a training-style loop over a Zarr array with package
// loader: block-shuffled batches of rows, a few epochs, a checkpoint of the
// loader's State after every batch, and samples/s and read amplification
// printed per epoch.
//
//	eval "$(bash .ci/s3server.sh start)"     # an S3 server (else a local directory)
//	go run ./examples/loader                 # writes a 64 MiB demo array, trains on it
//	go run ./examples/loader -prefix data -array x -epochs 3
//
// With the GOZARR_S3_* variables set (.ci/s3server.sh prints them) the array
// is read from that S3 bucket under -prefix; otherwise from the directory
// -dir. Without -array, a demo array (float32 rows of 16 KiB in shards of
// 1024 rows, zstd inner chunks of 256 rows) is written first and removed
// after: "demo" in a temporary directory, loader-demo-PID in a -dir given
// (refused if anything is there). -resume continues from the checkpoint file -state names.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/loader"
	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/fs"
	"github.com/gozarr/gozarr/store/s3"
	"github.com/gozarr/gozarr/store/s3/s3test"
	"github.com/gozarr/gozarr/zarr"
)

func main() {
	if err := run(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "loader:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context) error {
	prefix := flag.String("prefix", fmt.Sprintf("loader-demo-%d", os.Getpid()), "S3 prefix of the array's store")
	dir := flag.String("dir", "", "local store directory when no S3 server is set (default: a new temporary one)")
	name := flag.String("array", "", "the array to train on (default: write a demo array)")
	epochs := flag.Int("epochs", 2, "epochs")
	batch := flag.Int("batch", 256, "samples per batch")
	k := flag.Int("k", 16, "blocks per shuffle window")
	statePath := flag.String("state", "", "checkpoint file: the loader's State after every batch")
	resume := flag.Bool("resume", false, "continue from the -state checkpoint")
	flag.Parse()

	var st store.Store
	ownDir := false // a temporary directory of this run
	if srv, ok := s3test.LookupEnv(); ok {
		s, err := s3.Open(ctx, srv.Bucket, *prefix, srv.Options()...)
		if err != nil {
			return err
		}
		st = s
		fmt.Printf("store: s3 %s/%s/%s\n", srv.Endpoint, srv.Bucket, *prefix)
	} else {
		ownDir = *dir == ""
		if *dir == "" {
			d, err := os.MkdirTemp("", "loader-demo-")
			if err != nil {
				return err
			}
			defer os.RemoveAll(d)
			*dir = d
		}
		s, err := fs.New(*dir)
		if err != nil {
			return err
		}
		st = s
		fmt.Printf("store: directory %s\n", *dir)
	}
	if *name == "" {
		var err error
		if *name, err = demoName(ctx, st, ownDir); err != nil {
			return err
		}
		if err := writeDemo(ctx, st, *name); err != nil {
			return err
		}
		defer removeAll(context.Background(), st, *name)
	}
	// Count what the store answers, to report fetched bytes.
	counter := loader.NewCountingStore(st)
	a, err := zarr.OpenArray(ctx, counter, *name)
	if err != nil {
		return err
	}
	cfg := loader.Config{
		BatchSize: *batch, Sampler: loader.Sampler{Kind: loader.BlockShuffle, K: *k},
		Seed: 42, Epochs: *epochs, Budget: 512 << 20, Reads: 32, Prefetch: 4, Counter: counter,
	}
	if *resume && *statePath == "" {
		return errors.New("-resume needs -state FILE, the checkpoint to continue from")
	}
	if *resume {
		b, err := os.ReadFile(*statePath)
		if err != nil {
			return fmt.Errorf("-resume: %w", err)
		}
		if err := json.Unmarshal(b, &cfg.From); err != nil {
			return fmt.Errorf("%s: %w", *statePath, err)
		}
		fmt.Printf("resuming at epoch %d, batch %d\n", cfg.From.Epoch, cfg.From.Batch)
	}
	l, err := loader.New(ctx, loader.Dataset{Fields: []loader.Field{{Name: *name, Array: a}}}, cfg)
	if err != nil {
		return err
	}
	defer l.Close()
	fmt.Printf("%d samples of %v, %d batches per epoch\n", l.NumSamples(), a.Shape()[1:], l.NumBatches(0))

	// The loader reads ahead across epochs, so the byte counts are those
	// of the whole run so far, read-ahead into the next epoch included
	// (epoch 0's ratio is above the run's); the last line gives the run's.
	epoch, start, n := -1, time.Now(), 0
	report := func() {
		s := l.Stats()
		dt := time.Since(start).Seconds()
		fmt.Printf("epoch %d: %d samples in %.2f s, %.0f samples/s; so far (read-ahead included) decoded ÷ delivered %.3f, fetched ÷ delivered %.3f, %.2f s waiting for batches\n",
			epoch, n, dt, float64(n)/dt, s.Amplification(), s.FetchRatio(), s.Stall.Seconds())
	}
	var loss float64
	for {
		b, err := l.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		if b.Epoch != epoch {
			if epoch >= 0 {
				report()
				start = time.Now()
			}
			epoch, n = b.Epoch, 0
		}
		loss += step(b.Data[0], a.Metadata().DataType) // the "training step"
		n += b.Len()
		b.Release()
		if *statePath != "" {
			blob, _ := json.Marshal(l.State())
			if err := writeCheckpoint(*statePath, blob); err != nil {
				return err
			}
		}
	}
	s := l.Stats()
	if epoch >= 0 {
		report()
		fmt.Printf("whole run: decoded ÷ delivered %.3f, fetched ÷ delivered %.3f\n", s.Amplification(), s.FetchRatio())
	}
	fmt.Printf("read latency p50 %v p99 %v; batch assembly p50 %v; checksum %.6g\n", s.Read.P50, s.Read.P99, s.Assemble.P50, loss)
	return nil
}

// writeCheckpoint replaces the checkpoint at path with blob atomically: it
// writes a temporary file beside it and renames it over the old one, so a
// process killed at any moment leaves the old checkpoint or the new one,
// never a truncated file (os.WriteFile truncates first). Copy this, not
// os.WriteFile, into a training loop. (Surviving a power loss as well
// would take an f.Sync before the rename, at a disk flush per batch.)
func writeCheckpoint(path string, blob []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	if _, err := f.Write(blob); err != nil {
		f.Close()
		os.Remove(f.Name())
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return err
	}
	if err := os.Rename(f.Name(), path); err != nil {
		os.Remove(f.Name())
		return err
	}
	return nil
}

// step stands for a training step: it reads every element.
func step(data []byte, dt dtype.DataType) float64 {
	if dt != dtype.TypeFloat32 {
		// Any other data type: a sum of the bytes, a checksum that is
		// never NaN (the values are not read as float32).
		var sum uint64
		for _, b := range data {
			sum += uint64(b)
		}
		return float64(sum)
	}
	var sum float32
	for i := 0; i+4 <= len(data); i += 4 {
		sum += math.Float32frombits(uint32(data[i]) | uint32(data[i+1])<<8 | uint32(data[i+2])<<16 | uint32(data[i+3])<<24)
	}
	return float64(sum)
}

// writeDemo writes a 4096 × 4096 float32 array (64 MiB).
func writeDemo(ctx context.Context, st store.Store, name string) error {
	zs, _ := codecs.NewZstd(1, false)
	meta, err := zarr.NewArrayMetadata([]int{4096, 4096}, dtype.TypeFloat32, []int{256, 4096},
		zarr.Shards(1024, 4096), zarr.Compress(zs))
	if err != nil {
		return err
	}
	a, err := zarr.CreateArray(ctx, st, name, meta)
	if err != nil {
		return err
	}
	rows := make([]float32, 1024*4096)
	for r0 := 0; r0 < 4096; r0 += 1024 {
		for i := range rows {
			r, c := r0+i/4096, i%4096
			rows[i] = float32(math.Sin(float64(r)/50) + math.Cos(float64(c)/30))
		}
		if err := zarr.Write(ctx, a, rows, nd.Range(r0, r0+1024), nd.All()); err != nil {
			return err
		}
	}
	fmt.Println("wrote the demo array: 4096 × 4096 float32")
	return nil
}

// demoName is where the demo array goes: "demo" in a temporary directory
// of this run, else a name of this process (loader-demo-PID) that must
// hold nothing yet, so a directory of the user's is never written into or
// deleted from.
func demoName(ctx context.Context, st store.Store, ownDir bool) (string, error) {
	if ownDir {
		return "demo", nil
	}
	name := fmt.Sprintf("loader-demo-%d", os.Getpid())
	for k, err := range st.List(ctx, name+"/") {
		if err != nil {
			return "", err
		}
		return "", fmt.Errorf("the store already holds %s (%s): give -array to train on an array, or another -dir", name, k)
	}
	return name, nil
}

// removeAll deletes the demo array's keys (those under name/).
func removeAll(ctx context.Context, d store.Store, name string) {
	var keys []string
	for k, err := range d.List(ctx, name+"/") {
		if err != nil {
			return
		}
		keys = append(keys, k)
	}
	for _, k := range keys {
		_ = d.Delete(ctx, k)
	}
}

// Command zarrbeam re-encodes a Zarr array from one store into another with
// new chunks, shards and compression, as an Apache Beam pipeline (package
// zarrbeam's Rechunk and Finalize). It runs on prism, in process, by
// default; the same binary runs on Dataflow, Flink or Spark with Beam's
// --runner flags (see the README):
//
//	zarrbeam -src s3://bucket/in.zarr -dst /data/out.zarr \
//	    -chunks 1024,1024 -shards 4096,4096 -max-mem 256MiB
//
// Any gozarr store URL works for -src and -dst: a local path, file://,
// s3://, gs:// (the store/gcs module is linked in); az:// needs a build
// with a blank import of the store/azure module. The destination array's metadata is written first (shape,
// data type, fill value, attributes and dimension names of the source;
// chunks, shards and compression from the flags), then every write region
// by one worker, then the metadata again and, with -consolidate, the
// consolidated metadata of the group above it.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/x/beamx"
	"github.com/gozarr/gozarr/codecs"
	_ "github.com/gozarr/gozarr/store/gcs" // gs:// locations
	"github.com/gozarr/gozarr/zarr"
	"github.com/gozarr/gozarr/zarrbeam"
)

var (
	src         = flag.String("src", "", "source store URL (required)")
	srcPath     = flag.String("src-path", "", "source array's node path in its store")
	dst         = flag.String("dst", "", "destination store URL (required)")
	dstPath     = flag.String("dst-path", "", "destination array's node path in its store")
	chunks      = flag.String("chunks", "", "chunk shape, comma-separated (the inner chunk shape with -shards); default: the source's")
	shards      = flag.String("shards", "", "shard shape, comma-separated; default: not sharded")
	compress    = flag.String("compress", "zstd", "compression: zstd or none")
	level       = flag.Int("level", 3, "zstd level")
	maxMem      = flag.String("max-mem", "256MiB", "memory bound per read region and per write region (bytes, or with KiB, MiB, GiB)")
	selection   = flag.String("selection", "", "copy only this box (NumPy syntax, step-1 slices), aligned to the destination's shards when several jobs share the array")
	skipCreate  = flag.Bool("skip-create", false, "the destination array exists: do not write its metadata first")
	consolidate = flag.Bool("consolidate", false, "write the consolidated metadata of the group above the destination array (-dst-path's parent) at the end")
)

func main() {
	flag.Parse()
	// On a distributed runner this binary is also the worker: Init takes
	// over there and never returns.
	beam.Init()
	if err := run(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "zarrbeam:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context) error {
	if *src == "" || *dst == "" {
		return errors.New("-src and -dst are required")
	}
	mem, err := parseBytes(*maxMem)
	if err != nil {
		return fmt.Errorf("-max-mem: %w", err)
	}
	sr, dr := zarrbeam.Ref{URL: *src, Path: *srcPath}, zarrbeam.Ref{URL: *dst, Path: *dstPath}
	a, err := sr.Open(ctx)
	if err != nil {
		return err
	}
	if !*skipCreate {
		meta, err := destination(a)
		if err != nil {
			return err
		}
		if _, err := zarrbeam.CreateArray(ctx, dr, meta); err != nil {
			return err
		}
	}
	p, s := beam.NewPipelineWithRoot()
	written := zarrbeam.Rechunk(s, sr, dr, zarrbeam.RechunkOptions{MaxMem: mem, Selection: *selection})
	group := path.Dir("/" + *dstPath)[1:]
	zarrbeam.Finalize(s, dr, written, zarrbeam.FinalizeOptions{Consolidate: *consolidate, Group: group})
	start := time.Now()
	if err := beamx.Run(ctx, p); err != nil {
		return err
	}
	fmt.Printf("%s → %s: %v in %.2f s\n", sr, dr, a.Shape(), time.Since(start).Seconds())
	return nil
}

// destination returns the new array's metadata: the source's shape, data
// type, fill value, attributes and dimension names with the flags' chunks,
// shards and compression.
func destination(a *zarr.Array) (*zarr.ArrayMetadata, error) {
	m := a.Metadata()
	inner, err := parseShape(*chunks, a.Chunks())
	if err != nil {
		return nil, fmt.Errorf("-chunks: %w", err)
	}
	opts := []zarr.MetadataOption{zarr.Fill(m.FillValue), zarr.Attributes(m.Attributes)}
	switch *compress {
	case "zstd":
		zs, _ := codecs.NewZstd(*level, false)
		opts = append(opts, zarr.Compress(zs))
	case "none":
	default:
		return nil, fmt.Errorf("-compress %q: want zstd or none", *compress)
	}
	if *shards != "" {
		sh, err := parseShape(*shards, nil)
		if err != nil {
			return nil, fmt.Errorf("-shards: %w", err)
		}
		opts = append(opts, zarr.Shards(sh...))
	}
	meta, err := zarr.NewArrayMetadata(m.Shape, m.DataType, inner, opts...)
	if err != nil {
		return nil, err
	}
	meta.DimensionNames = m.DimensionNames
	return meta, nil
}

func parseShape(s string, def []int) ([]int, error) {
	if s == "" {
		if def == nil {
			return nil, errors.New("empty shape")
		}
		return def, nil
	}
	var out []int
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || v < 1 {
			return nil, fmt.Errorf("%q: want positive integers, comma-separated", s)
		}
		out = append(out, v)
	}
	return out, nil
}

func parseBytes(s string) (int64, error) {
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		m      int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}} {
		if strings.HasSuffix(s, u.suffix) {
			s, mult = strings.TrimSuffix(s, u.suffix), u.m
			break
		}
	}
	v, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil || v < 1 || v > (1<<62)/mult {
		return 0, fmt.Errorf("%q: want a positive size such as 268435456 or 256MiB", s)
	}
	return v * mult, nil
}

// Package zarrbeam reads, writes and rechunks Zarr arrays in Apache Beam
// pipelines (the Go SDK), on any runner: prism locally, Dataflow, Flink or
// Spark at scale. It lives in a module of its own, so that users of gozarr
// never download Beam.
//
// A pipeline moves regions: a Region is a box of an array (its start and
// shape in array coordinates) with its elements in C order, the array's
// memory representation. Its key is FormatKey(Start), so the elements of
// a PCollection are KV<string, Region> pairs.
//
//   - Read plans an array, or a box of it, into regions aligned to its chunk
//     grid (whole shards, or whole inner chunks when a shard does not fit
//     the memory budget) and reads each on a worker.
//   - Write writes regions into an existing array with one writer per write
//     unit (chunk, or shard): a region that covers a write unit in part is
//     refused (zarr.ErrMisaligned) unless merging is asked for, in which
//     case the pieces of each unit are grouped by key and written once.
//   - Rechunk copies an array into another with other chunks and shards,
//     the rechunker algorithm with a memory bound per worker: read regions
//     and write regions are consolidated up to the bound, and the shuffle
//     between them plays the intermediate array.
//   - Finalize runs once every write is done: it writes the array's
//     metadata again and, if asked, the consolidated metadata of a group.
//
// The destination array's metadata is written first, by the launcher
// (zarr.CreateArray, or CreateArray here), as xarray-beam and
// pangeo-forge-recipes do from a template. Every task is idempotent, so a
// runner may retry a failed bundle: the output is the same.
//
// Arrays are named by a Ref (a store URL, as package storeurl opens it, and
// a node path), which is what travels to the workers; each DoFn opens its
// arrays in Setup. Options a worker needs to open a store (an S3 HTTP
// client, say) are set in every process with SetStoreOptions.
package zarrbeam

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/gozarr/gozarr/store"
	_ "github.com/gozarr/gozarr/store/s3" // s3:// Refs: storeurl opens them once store/s3 is linked
	"github.com/gozarr/gozarr/store/storeurl"
	"github.com/gozarr/gozarr/zarr"
)

// ErrInvalid reports an invalid argument of a transform: a malformed key
// or region, a memory bound too small for one unit of work.
var ErrInvalid = errors.New("zarrbeam: invalid argument")

// Ref names an array: the store's URL (anything storeurl.Open accepts:
// a local path, file://, s3://, gs://, az:// once registered, memory://name
// within one process) and the array's node path in it ("" for the root).
type Ref struct {
	URL  string
	Path string
}

// String returns the URL and path as one location.
func (r Ref) String() string {
	if r.Path == "" {
		return r.URL
	}
	return strings.TrimSuffix(r.URL, "/") + "/" + r.Path
}

// Region is a box of an array and its elements: Start and Shape in array
// coordinates, Data the elements in C order (the array's memory
// representation, Shape's element count times the item size).
type Region struct {
	Start []int
	Shape []int
	Data  []byte
}

// Stop returns the region's exclusive end in every dimension.
func (b Region) Stop() []int {
	s := make([]int, len(b.Start))
	for d := range s {
		s[d] = b.Start[d] + b.Shape[d]
	}
	return s
}

// FormatKey returns the key of the region that starts at start: its
// coordinates joined by commas ("0,4096").
func FormatKey(start []int) string {
	var sb strings.Builder
	for d, v := range start {
		if d > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(strconv.Itoa(v))
	}
	return sb.String()
}

// ParseKey parses a key written by FormatKey.
func ParseKey(key string) ([]int, error) {
	if key == "" {
		return []int{}, nil
	}
	parts := strings.Split(key, ",")
	out := make([]int, len(parts))
	for i, p := range parts {
		v, err := strconv.Atoi(p)
		if err != nil || v < 0 {
			return nil, fmt.Errorf("%w: key %q", ErrInvalid, key)
		}
		out[i] = v
	}
	return out, nil
}

// encodeRegion is Region's Beam coder: rank, start and shape as uvarints,
// then the data. It is deterministic, so regions may be keys too.
func encodeRegion(b Region) ([]byte, error) {
	if len(b.Start) != len(b.Shape) {
		return nil, fmt.Errorf("%w: region of start %v and shape %v", ErrInvalid, b.Start, b.Shape)
	}
	out := make([]byte, 0, binary.MaxVarintLen64*(1+2*len(b.Start))+len(b.Data))
	out = binary.AppendUvarint(out, uint64(len(b.Start)))
	for _, v := range append(append([]int(nil), b.Start...), b.Shape...) {
		if v < 0 {
			return nil, fmt.Errorf("%w: region of start %v and shape %v", ErrInvalid, b.Start, b.Shape)
		}
		out = binary.AppendUvarint(out, uint64(v))
	}
	return append(out, b.Data...), nil
}

func decodeRegion(p []byte) (Region, error) {
	bad := fmt.Errorf("%w: encoded region of %d bytes", ErrInvalid, len(p))
	n, k := binary.Uvarint(p)
	if k <= 0 || n > zarr.MaxRank {
		return Region{}, bad
	}
	p = p[k:]
	vals := make([]int, 2*n)
	for i := range vals {
		v, k := binary.Uvarint(p)
		if k <= 0 || v > 1<<62 {
			return Region{}, bad
		}
		vals[i], p = int(v), p[k:]
	}
	return Region{Start: vals[:n:n], Shape: vals[n:], Data: p}, nil
}

func init() {
	bt := reflect.TypeOf(Region{})
	beam.RegisterType(bt)
	beam.RegisterCoder(bt, encodeRegion, decodeRegion)
	beam.RegisterType(reflect.TypeOf(Ref{}))
}

var storeOpts struct {
	sync.Mutex
	opts []storeurl.Option
}

// SetStoreOptions sets the options every DoFn of this process passes to
// storeurl.Open (an S3 HTTP client, a filesystem option). Call it in every
// process of the job (the launcher and the workers: from init or main,
// before beam.Init) so they open stores alike.
func SetStoreOptions(opts ...storeurl.Option) {
	storeOpts.Lock()
	defer storeOpts.Unlock()
	storeOpts.opts = opts
}

// OpenStore opens the store at url with the options of SetStoreOptions,
// then extra.
func OpenStore(ctx context.Context, url string, extra ...storeurl.Option) (store.Reader, error) {
	storeOpts.Lock()
	opts := append([]storeurl.Option(nil), storeOpts.opts...)
	storeOpts.Unlock()
	return storeurl.Open(ctx, url, append(opts, extra...)...)
}

// Open opens the array r names.
func (r Ref) Open(ctx context.Context) (*zarr.Array, error) {
	st, err := OpenStore(ctx, r.URL)
	if err != nil {
		return nil, err
	}
	a, err := zarr.OpenArray(ctx, st, r.Path)
	if err != nil {
		return nil, fmt.Errorf("zarrbeam: open %s: %w", r, err)
	}
	return a, nil
}

// CreateArray writes the metadata of a new array at r (replacing any
// array there), the step a launcher runs before the pipeline that writes
// it.
func CreateArray(ctx context.Context, r Ref, meta *zarr.ArrayMetadata) (*zarr.Array, error) {
	st, err := OpenStore(ctx, r.URL, storeurl.CreateDir())
	if err != nil {
		return nil, err
	}
	s, ok := st.(store.Store)
	if !ok {
		return nil, fmt.Errorf("zarrbeam: create %s: %w", r, store.ErrReadOnly)
	}
	return zarr.CreateArray(ctx, s, r.Path, meta)
}

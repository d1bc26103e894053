package zarrbeam

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/options/jobopts"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners/prism"
	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/storeurl"
	"github.com/gozarr/gozarr/zarr"
)

func TestMain(m *testing.M) {
	flag.Parse()
	beam.Init()
	// prism logs every bundle (and each injected failure, at length):
	// quiet unless ZARRBEAM_LOG is set.
	if os.Getenv("ZARRBEAM_LOG") == "" {
		slog.SetDefault(slog.New(slog.NewTextHandler(io.Discard, nil)))
	}
	// Loopback: prism runs in this process and so do its workers; no
	// worker binary is built.
	*jobopts.EnvironmentType = "loopback"
	f, err := os.CreateTemp("", "zarrbeam-worker")
	if err != nil {
		panic(err)
	}
	*jobopts.WorkerBinary = f.Name()
	code := m.Run()
	os.Remove(f.Name())
	os.Exit(code)
}

// run executes p on prism (in process) within a minute.
func run(t *testing.T, p *beam.Pipeline) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, err := prism.Execute(ctx, p)
	return err
}

// pattern returns n elements' bytes of a deterministic pattern that
// differs between neighbouring elements and chunks.
func pattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*131 + i>>9 + i>>17)
	}
	return b
}

// newArray creates an array at dir (file store) with the given chunks
// (shard shape when inner is set) and writes data into it unless data is
// nil.
func newArray(t *testing.T, dir string, shape []int, dt dtype.DataType, chunks, inner []int, data []byte) Ref {
	t.Helper()
	zs, _ := codecs.NewZstd(1, false)
	opts := []zarr.MetadataOption{zarr.Compress(zs)}
	if inner != nil {
		opts = append(opts, zarr.Shards(chunks...))
		chunks = inner
	}
	meta, err := zarr.NewArrayMetadata(shape, dt, chunks, opts...)
	if err != nil {
		t.Fatal(err)
	}
	r := Ref{URL: dir}
	a, err := CreateArray(context.Background(), r, meta)
	if err != nil {
		t.Fatal(err)
	}
	if data != nil {
		if err := a.WriteBytes(context.Background(), data); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

// readAll reads the whole array r names.
func readAll(t *testing.T, r Ref) []byte {
	t.Helper()
	a, err := r.Open(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	b, _, err := a.ReadBytes(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func sameBytes(t *testing.T, what string, got, want []byte) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d bytes, want %d", what, len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("%s: byte %d is %d, want %d", what, i, got[i], want[i])
		}
	}
}

var (
	collected   = map[string][]int{}
	collectedMu sync.Mutex
)

type collectFn struct{ ID string }

func (f *collectFn) ProcessElement(v int) {
	collectedMu.Lock()
	defer collectedMu.Unlock()
	collected[f.ID] = append(collected[f.ID], v)
}

func init() { register.DoFn1x0[int](&collectFn{}) }

var collectSeq int

// countOf returns the PCollection's one int (Finalize's output) as a
// closure to call after the run.
func countOf(s beam.Scope, col beam.PCollection) func() int {
	collectSeq++
	id := fmt.Sprint("c", collectSeq, time.Now().UnixNano())
	beam.ParDo0(s, &collectFn{ID: id}, col)
	return func() int {
		collectedMu.Lock()
		defer collectedMu.Unlock()
		v := collected[id]
		if len(v) != 1 {
			return -len(v) - 1
		}
		return v[0]
	}
}

// TestRoundTripSharded reads a sharded array (shards 1024², inner chunks
// 256², partial shards at the far edges) as regions of whole shards and
// writes them into an array of the same layout: equal to its source.
func TestRoundTripSharded(t *testing.T) {
	dir := t.TempDir()
	shape := []int{3000, 2500}
	src := pattern(shape[0] * shape[1] * 2)
	sr := newArray(t, filepath.Join(dir, "src.zarr"), shape, dtype.TypeUint16, []int{1024, 1024}, []int{256, 256}, src)
	dr := newArray(t, filepath.Join(dir, "dst.zarr"), shape, dtype.TypeUint16, []int{1024, 1024}, []int{256, 256}, nil)

	p, s := beam.NewPipelineWithRoot()
	written := Write(s, dr, Read(s, sr, ReadOptions{MaxRegionBytes: 4 << 20}), WriteOptions{})
	n := countOf(s, Finalize(s, dr, written, FinalizeOptions{}))
	if err := run(t, p); err != nil {
		t.Fatal(err)
	}
	if got := n(); got != 9 {
		t.Errorf("%d write units written, want 9 shards", got)
	}
	sameBytes(t, "round trip", readAll(t, dr), src)
}

// TestRechunk512To4096 rechunks an 8192² uint8 array (64 MiB) of 512²
// chunks into 4096² shards of 1024² inner chunks with a 16 MiB bound per
// region: equal to its source.
func TestRechunk512To4096(t *testing.T) {
	if testing.Short() {
		t.Skip("64 MiB rechunk")
	}
	dir := t.TempDir()
	shape := []int{8192, 8192}
	src := pattern(shape[0] * shape[1])
	sr := newArray(t, filepath.Join(dir, "src.zarr"), shape, dtype.TypeUint8, []int{512, 512}, nil, src)
	dr := newArray(t, filepath.Join(dir, "dst.zarr"), shape, dtype.TypeUint8, []int{4096, 4096}, []int{1024, 1024}, nil)

	p, s := beam.NewPipelineWithRoot()
	written := Rechunk(s, sr, dr, RechunkOptions{MaxMem: 16 << 20})
	n := countOf(s, Finalize(s, dr, written, FinalizeOptions{}))
	if err := run(t, p); err != nil {
		t.Fatal(err)
	}
	if got := n(); got != 4 {
		t.Errorf("%d write units written, want 4 shards", got)
	}
	sameBytes(t, "rechunked", readAll(t, dr), src)
	a, _ := dr.Open(context.Background())
	if got := fmt.Sprint(a.Shards(), a.Chunks()); got != "[4096 4096] [1024 1024]" {
		t.Errorf("destination layout: shards and chunks %s, want shards 4096² of 1024² chunks", got)
	}
}

// TestRechunkPieces rechunks with read regions that straddle write regions
// in both directions (source chunks larger than the target's along one
// dimension, smaller along the other) and edge units.
func TestRechunkPieces(t *testing.T) {
	dir := t.TempDir()
	shape := []int{97, 130}
	src := pattern(shape[0] * shape[1] * 4)
	sr := newArray(t, filepath.Join(dir, "src.zarr"), shape, dtype.TypeFloat32, []int{30, 7}, nil, src)
	dr := newArray(t, filepath.Join(dir, "dst.zarr"), shape, dtype.TypeFloat32, []int{20, 50}, []int{10, 25}, nil)
	p, s := beam.NewPipelineWithRoot()
	n := countOf(s, Finalize(s, dr, Rechunk(s, sr, dr, RechunkOptions{MaxMem: 20 * 50 * 4 * 2}), FinalizeOptions{}))
	if err := run(t, p); err != nil {
		t.Fatal(err)
	}
	if got := n(); got != 5*3 {
		t.Errorf("%d write units written, want 15", got)
	}
	sameBytes(t, "rechunked", readAll(t, dr), src)
}

// TestRechunkParts copies an array as two jobs running side by side, on
// boxes aligned to the destination's shards but not to the rechunk's
// write regions (two shards wide): each job writes only the shards its
// pieces meet, so the two never write the same shard.
func TestRechunkParts(t *testing.T) {
	dir := t.TempDir()
	shape := []int{97, 130}
	src := pattern(shape[0] * shape[1] * 4)
	sr := newArray(t, filepath.Join(dir, "src.zarr"), shape, dtype.TypeFloat32, []int{30, 7}, nil, src)
	dr := newArray(t, filepath.Join(dir, "dst.zarr"), shape, dtype.TypeFloat32, []int{20, 50}, []int{10, 25}, nil)
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, sel := range []string{":, 0:50", ":, 50:"} {
		p, s := beam.NewPipelineWithRoot()
		Rechunk(s, sr, dr, RechunkOptions{MaxMem: 20 * 50 * 4 * 2, Selection: sel})
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = run(t, p)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	sameBytes(t, "rechunked in two parts", readAll(t, dr), src)
}

// TestRetryExact fails a worker once after it wrote one shard (a worker
// lost before its bundle committed), then before writing another: prism
// fails the job at a failed bundle, so the job is run again, which runs
// every bundle again as a runner's retry would. The output is exact, with
// read regions that are whole write regions (written without a shuffle) and
// with read regions that straddle them (pieces merged after the shuffle).
func TestRetryExact(t *testing.T) {
	for _, chunk := range []int{256, 300} {
		t.Run(fmt.Sprint("source chunks ", chunk), func(t *testing.T) { testRetryExact(t, chunk) })
	}
}

func testRetryExact(t *testing.T, chunk int) {
	dir := t.TempDir()
	shape := []int{2048, 2048}
	src := pattern(shape[0] * shape[1])
	sr := newArray(t, filepath.Join(dir, "src.zarr"), shape, dtype.TypeUint8, []int{chunk, chunk}, nil, src)
	dr := newArray(t, filepath.Join(dir, "dst.zarr"), shape, dtype.TypeUint8, []int{1024, 1024}, []int{512, 512}, nil)
	// Stale bytes in a shard, to be replaced.
	a, _ := dr.Open(context.Background())
	if err := a.WriteBytes(context.Background(), bytes.Repeat([]byte{7}, 1024*1024), items([]int{1024, 1024}, []int{1024, 1024})...); err != nil {
		t.Fatal(err)
	}

	var mu sync.Mutex
	failures := map[string]bool{}
	injected := errors.New("injected worker failure")
	faultHook = func(stage, key string) error {
		mu.Lock()
		defer mu.Unlock()
		if (stage == "written" && key == "c/0/1") || (stage == "write" && key == "c/1/0") {
			if !failures[stage] {
				failures[stage] = true
				return fmt.Errorf("%s %s: %w", stage, key, injected)
			}
		}
		return nil
	}
	t.Cleanup(func() { faultHook = nil })

	build := func() (*beam.Pipeline, func() int) {
		p, s := beam.NewPipelineWithRoot()
		return p, countOf(s, Finalize(s, dr, Rechunk(s, sr, dr, RechunkOptions{MaxMem: 1 << 20}), FinalizeOptions{}))
	}
	var n func() int
	tries := rerunPastFaults(t, func() *beam.Pipeline {
		p, count := build()
		n = count
		return p
	}, injected, failures)
	if got := n(); got != 4 {
		t.Errorf("%d write units written, want 4", got)
	}
	sameBytes(t, fmt.Sprintf("after %d tries", tries), readAll(t, dr), src)
}

// TestMisalignedRefused writes regions that cover shards in part: refused
// with zarr.ErrMisaligned's message (and the remedy) unless Merge is set;
// with Merge, a partial write of a region keeps the rest of the array.
func TestMisalignedRefused(t *testing.T) {
	dir := t.TempDir()
	shape := []int{600, 600}
	src := pattern(shape[0] * shape[1])
	sr := newArray(t, filepath.Join(dir, "src.zarr"), shape, dtype.TypeUint8, []int{100, 100}, nil, src)
	dr := newArray(t, filepath.Join(dir, "dst.zarr"), shape, dtype.TypeUint8, []int{256, 256}, []int{64, 64}, nil)

	p, s := beam.NewPipelineWithRoot()
	Write(s, dr, Read(s, sr, ReadOptions{RegionShape: []int{100, 100}}), WriteOptions{})
	err := run(t, p)
	if err == nil || !strings.Contains(err.Error(), zarr.ErrMisaligned.Error()) || !strings.Contains(err.Error(), "Merge") {
		t.Fatalf("misaligned write: %v, want %q and the Merge remedy", err, zarr.ErrMisaligned)
	}
	msg := err.Error()
	t.Logf("refused: %.400s", msg[strings.Index(msg, "zarrbeam: write"):])
	// The same check without a runner: errors.Is holds.
	b, _ := dr.Open(context.Background())
	err = writeRegion(context.Background(), b, dr, Region{Start: []int{0, 0}, Shape: []int{100, 100}, Data: make([]byte, 100*100)}, nil, func(string) {})
	if !errors.Is(err, zarr.ErrMisaligned) {
		t.Errorf("writeRegion of a partial shard: %v, want ErrMisaligned", err)
	}

	// Merge: the region 100:500, 0:600 over an array already holding 9s.
	nines := bytes.Repeat([]byte{9}, len(src))
	if err := b.WriteBytes(context.Background(), nines); err != nil {
		t.Fatal(err)
	}
	p, s = beam.NewPipelineWithRoot()
	regions := Read(s, sr, ReadOptions{Selection: "100:500, :", RegionShape: []int{100, 100}})
	Finalize(s, dr, Write(s, dr, regions, WriteOptions{Merge: true}), FinalizeOptions{})
	if err := run(t, p); err != nil {
		t.Fatal(err)
	}
	want := append(append(append([]byte(nil), nines[:100*600]...), src[100*600:500*600]...), nines[500*600:]...)
	sameBytes(t, "merged region", readAll(t, dr), want)

	// Overlapping regions are refused, not silently resolved.
	p, s = beam.NewPipelineWithRoot()
	twice := beam.Flatten(s, Read(s, sr, ReadOptions{RegionShape: []int{100, 100}}), Read(s, sr, ReadOptions{Selection: "0:50, 0:50"}))
	Write(s, dr, twice, WriteOptions{Merge: true})
	if err := run(t, p); err == nil || !strings.Contains(err.Error(), "overlap") {
		t.Errorf("overlapping regions merged: %v, want an error naming the overlap", err)
	}
}

// TestFinalizeConsolidates rechunks into an array of a group and has
// Finalize write the group's consolidated metadata: it names the array
// with its new layout, and it is not stale.
func TestFinalizeConsolidates(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	shape := []int{300, 200}
	src := pattern(shape[0] * shape[1] * 4)
	sr := newArray(t, filepath.Join(dir, "src.zarr"), shape, dtype.TypeFloat32, []int{64, 64}, nil, src)
	root := filepath.Join(dir, "group.zarr")
	st, err := OpenStore(ctx, root, storeurl.CreateDir())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := zarr.CreateGroup(ctx, st.(store.Store), "", map[string]any{"title": "test"}); err != nil {
		t.Fatal(err)
	}
	meta, err := zarr.NewArrayMetadata(shape, dtype.TypeFloat32, []int{32, 32}, zarr.Shards(128, 128))
	if err != nil {
		t.Fatal(err)
	}
	dr := Ref{URL: root, Path: "data"}
	if _, err := CreateArray(ctx, dr, meta); err != nil {
		t.Fatal(err)
	}
	p, s := beam.NewPipelineWithRoot()
	n := countOf(s, Finalize(s, dr, Rechunk(s, sr, dr, RechunkOptions{MaxMem: 1 << 20}), FinalizeOptions{Consolidate: true}))
	if err := run(t, p); err != nil {
		t.Fatal(err)
	}
	if got := n(); got != 3*2 {
		t.Errorf("%d write units written, want 6", got)
	}
	g, err := zarr.OpenGroup(ctx, st, "")
	if err != nil {
		t.Fatal(err)
	}
	if ok, nodes := g.Consolidated(); !ok || nodes != 1 {
		t.Fatalf("consolidated %v with %d nodes, want the array", ok, nodes)
	}
	if err := g.VerifyConsolidated(ctx); err != nil {
		t.Errorf("consolidated metadata stale: %v", err)
	}
	a, err := g.OpenArray(ctx, "data")
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(a.Shards()) != "[128 128]" {
		t.Errorf("array through the consolidated metadata: shards %v, want [128 128]", a.Shards())
	}
	sameBytes(t, "rechunked into the group", readAll(t, dr), src)
}

// rerunPastFaults runs the pipeline build makes until a run succeeds, as a
// runner retries a job: every failed run must fail with injected, and the
// third run must be the first to succeed, each of the two faults recorded
// in failures having failed one run. It returns the number of runs.
func rerunPastFaults(t *testing.T, build func() *beam.Pipeline, injected error, failures map[string]bool) (tries int) {
	t.Helper()
	for {
		tries++
		err := run(t, build())
		if err == nil {
			break
		}
		if !strings.Contains(err.Error(), injected.Error()) {
			t.Fatalf("try %d: %v", tries, err)
		}
		if tries == 3 {
			t.Fatalf("still failing after %d tries: %v", tries, err)
		}
	}
	if tries != 3 || len(failures) != 2 {
		t.Fatalf("%d tries, failures injected %v: want both faults to have failed a run", tries, failures)
	}
	return tries
}

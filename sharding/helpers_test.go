package sharding_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/internal/refdata"
	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/mem"
)

// countingStore wraps a store.Reader and counts the calls and bytes read.
type countingStore struct {
	r      store.Reader
	mu     sync.Mutex
	gets   int // Get calls
	multi  int // GetRanges calls
	ranges int // ranges requested in all calls
	bytes  int64
	full   int // Get calls with store.Full()
	log    []string
}

func (c *countingStore) Get(ctx context.Context, key string, r store.ByteRange) ([]byte, error) {
	b, err := c.r.Get(ctx, key, r)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gets++
	c.ranges++
	if r.IsFull() {
		c.full++
	}
	c.bytes += int64(len(b))
	c.log = append(c.log, fmt.Sprintf("get %s %v", key, r))
	return b, err
}

func (c *countingStore) GetRanges(ctx context.Context, key string, rs []store.ByteRange) ([][]byte, error) {
	out, err := store.GetRanges(ctx, c.r, key, rs)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.multi++
	c.ranges += len(rs)
	for _, b := range out {
		c.bytes += int64(len(b))
	}
	c.log = append(c.log, fmt.Sprintf("getranges %s %v", key, rs))
	return out, err
}

// ReadInto counts like a Get (a whole-value one when it reads from 0 to
// the end of the value): the sharding reader reads whole shards through it.
func (c *countingStore) ReadInto(ctx context.Context, key string, off int64, dst []byte) (int, error) {
	into, ok := c.r.(store.IntoReader)
	if !ok {
		return 0, fmt.Errorf("counting store: %T cannot ReadInto", c.r)
	}
	n, err := into.ReadInto(ctx, key, off, dst)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gets++
	c.ranges++
	if off == 0 && n < len(dst) {
		c.full++
	}
	c.bytes += int64(n)
	c.log = append(c.log, fmt.Sprintf("readinto %s %d+%d", key, off, len(dst)))
	return n, err
}

// MaxConcurrency makes the counting store look remote (store.ConcurrencyLimiter),
// so scattered ranges go out as one GetRanges call, as they do to S3: the
// request-economy figures are about remote stores.
func (c *countingStore) MaxConcurrency() int { return 64 }

// calls returns the number of store calls.
func (c *countingStore) calls() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gets + c.multi
}

func (c *countingStore) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gets, c.multi, c.ranges, c.bytes, c.full, c.log = 0, 0, 0, 0, 0, nil
}

// refArray is the little of a reference case's metadata the tests need.
type refArray struct {
	name       string
	dir        string
	shape      []int
	shardShape []int
	dt         dtype.DataType
	fill       []byte
	specs      []codecs.Spec
	sep        string
	data       []byte // expected contents, C order, little-endian
}

func (a *refArray) key(coords []int) string {
	parts := []string{"c"}
	for _, c := range coords {
		parts = append(parts, strconv.Itoa(c))
	}
	return strings.Join(parts, a.sep)
}

func (a *refArray) grid() []int {
	g := make([]int, len(a.shape))
	for d := range g {
		g[d] = (a.shape[d] + a.shardShape[d] - 1) / a.shardShape[d]
	}
	return g
}

func (a *refArray) repr() codecs.ChunkRepr {
	return codecs.ChunkRepr{Shape: a.shardShape, DType: a.dt, Fill: a.fill}
}

// forEachCoord calls fn with every coordinate of shape, C order.
func forEachCoord(shape []int, fn func([]int)) {
	if nd.NumElements(shape) == 0 {
		return
	}
	c := make([]int, len(shape))
	for {
		fn(append([]int{}, c...))
		d := len(shape) - 1
		for ; d >= 0; d-- {
			c[d]++
			if c[d] < shape[d] {
				break
			}
			c[d] = 0
		}
		if d < 0 {
			return
		}
	}
}

// loadRef reads a reference case.
func loadRef(t testing.TB, name string) *refArray {
	t.Helper()
	rc := refdata.Lookup(t, name)
	dir := rc.Dir()
	doc, err := os.ReadFile(filepath.Join(dir, "zarr.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Shape     []int           `json:"shape"`
		DataType  string          `json:"data_type"`
		FillValue json.RawMessage `json:"fill_value"`
		ChunkGrid struct {
			Configuration struct {
				ChunkShape []int `json:"chunk_shape"`
			} `json:"configuration"`
		} `json:"chunk_grid"`
		ChunkKeyEncoding struct {
			Name          string `json:"name"`
			Configuration struct {
				Separator string `json:"separator"`
			} `json:"configuration"`
		} `json:"chunk_key_encoding"`
		Codecs []codecs.Spec `json:"codecs"`
	}
	if err := json.Unmarshal(doc, &m); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	a := &refArray{name: name, dir: dir, shape: m.Shape, shardShape: m.ChunkGrid.Configuration.ChunkShape, specs: m.Codecs, sep: "/"}
	if m.ChunkKeyEncoding.Configuration.Separator != "" {
		a.sep = m.ChunkKeyEncoding.Configuration.Separator
	}
	if m.ChunkKeyEncoding.Name != "default" {
		t.Fatalf("%s: chunk key encoding %q", name, m.ChunkKeyEncoding.Name)
	}
	if a.dt, err = dtype.Parse(m.DataType); err != nil {
		t.Fatal(err)
	}
	if a.fill, err = dtype.ParseFill(a.dt, m.FillValue); err != nil {
		t.Fatal(err)
	}
	want := rc.ExpectedArray(t)
	if want.Descr != a.dt.NumpyDescr() || !slices.Equal(want.Shape, a.shape) {
		t.Fatalf("%s: .npy %s %v, metadata says %s %v", name, want.Descr, want.Shape, a.dt.NumpyDescr(), a.shape)
	}
	a.data = want.Data
	return a
}

// loadRefChain reads a reference case and builds its codec chain, skipping
// the test when the chain needs blosc and blosc is not registered.
func loadRefChain(t *testing.T, name string) (*refArray, *codecs.Chain) {
	t.Helper()
	a := loadRef(t, name)
	if usesCodec(a.specs, "blosc") && !registered("blosc") {
		t.Skip("blosc codec not registered")
	}
	chain, err := codecs.NewChain(a.specs, a.repr())
	if err != nil {
		t.Fatal(err)
	}
	return a, chain
}

// shardCases lists the reference cases tagged codec:sharding.
func shardCases(t testing.TB) []string {
	t.Helper()
	var out []string
	for _, c := range refdata.Cases(t) {
		if c.HasTag("codec:sharding") {
			out = append(out, c.Name)
		}
	}
	if len(out) < 10 {
		t.Fatalf("only %d sharded reference cases", len(out))
	}
	return out
}

// usesCodec reports whether specs (recursively) name codec.
func usesCodec(specs []codecs.Spec, name string) bool {
	for _, s := range specs {
		if s.Name == name || bytes.Contains(s.Configuration, []byte(`"`+name+`"`)) {
			return true
		}
	}
	return false
}

func registered(name string) bool {
	for _, n := range codecs.Registered() {
		if n == name {
			return true
		}
	}
	return false
}

// loadStore puts every file of a reference case under its relative path.
func loadStore(t testing.TB, a *refArray) *mem.Store {
	t.Helper()
	s := mem.New()
	err := filepath.WalkDir(a.dir, func(p string, e os.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(a.dir, p)
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return s.Set(context.Background(), filepath.ToSlash(rel), b)
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// extract copies the elements sel names from view v into a new C-order buffer.
func extract(v nd.View, sel nd.Selection) []byte {
	start := make([]int, len(sel))
	count := make([]int, len(sel))
	step := make([]int, len(sel))
	for d, s := range sel {
		start[d], count[d], step[d] = s.Start, s.Count, s.Step
	}
	out := make([]byte, nd.NumElements(count)*v.ItemSize)
	nd.Copy(nd.Contiguous(out, count, v.ItemSize), v.Slice(start, count, step))
	return out
}

// sameElems compares two buffers of elements of dt: any NaN equals any
// NaN, all else bit for bit. It returns the first differing element or -1.
func sameElems(dt dtype.DataType, a, b []byte) int {
	if len(a) != len(b) {
		return 0
	}
	if bytes.Equal(a, b) {
		return -1
	}
	sz := dt.Size()
	for i := 0; i < len(a); i += sz {
		x, y := a[i:i+sz], b[i:i+sz]
		if bytes.Equal(x, y) {
			continue
		}
		if dt.Kind() == dtype.Float && isNaN(x) && isNaN(y) {
			continue
		}
		return i / sz
	}
	return -1
}

func isNaN(b []byte) bool {
	switch len(b) {
	case 8:
		return math.IsNaN(math.Float64frombits(binary.LittleEndian.Uint64(b)))
	case 4:
		return math.IsNaN(float64(math.Float32frombits(binary.LittleEndian.Uint32(b))))
	case 2:
		return dtype.Float16(binary.LittleEndian.Uint16(b)).IsNaN()
	}
	return false
}

// shardRegion returns the in-array extent of the shard at coords and its origin.
func (a *refArray) shardRegion(coords []int) (origin, extent []int) {
	origin = make([]int, len(coords))
	extent = make([]int, len(coords))
	for d, c := range coords {
		origin[d] = c * a.shardShape[d]
		extent[d] = min(a.shardShape[d], a.shape[d]-origin[d])
	}
	return origin, extent
}

// expected returns the elements sel (relative to the shard at origin) names.
func (a *refArray) expected(origin []int, sel nd.Selection) []byte {
	g := make(nd.Selection, len(sel))
	for d, s := range sel {
		g[d] = nd.Dim{Start: origin[d] + s.Start, Count: s.Count, Step: s.Step}
	}
	return extract(nd.Contiguous(a.data, a.shape, a.dt.Size()), g)
}

// paddedShard returns the shard at coords as zarr-python builds it: the
// array's data where it has some, the fill value elsewhere.
func (a *refArray) paddedShard(coords []int) []byte {
	origin, extent := a.shardRegion(coords)
	out := make([]byte, nd.NumElements(a.shardShape)*a.dt.Size())
	v := nd.Contiguous(out, a.shardShape, a.dt.Size())
	nd.Fill(v, a.fill)
	ones := make([]int, len(origin))
	zero := make([]int, len(origin))
	for d := range ones {
		ones[d] = 1
	}
	nd.Copy(v.Slice(zero, extent, ones), nd.Contiguous(a.data, a.shape, a.dt.Size()).Slice(origin, extent, ones))
	return out
}

// memWith returns an in-memory store holding value under key.
func memWith(t testing.TB, key string, value []byte) *mem.Store {
	t.Helper()
	s := mem.New()
	if err := s.Set(context.Background(), key, value); err != nil {
		t.Fatal(err)
	}
	return s
}

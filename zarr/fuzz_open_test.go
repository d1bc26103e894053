package zarr

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"runtime/metrics"
	"slices"
	"testing"

	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/store/mem"
)

// Limits the open-and-read fuzz targets open arrays with: every read they
// make allocates a bounded amount whatever the document says.
const (
	fuzzMetaBytes  = 64 << 10
	fuzzChunkBytes = 1 << 20
	fuzzReadBytes  = 1 << 20
	// fuzzAllocBound is what one input may allocate in all: the limits
	// above, a few times over for decode buffers and pipeline scratch.
	fuzzAllocBound = 64 << 20
)

var fuzzOpts = []Option{WithMaxMetadataBytes(fuzzMetaBytes), WithMaxChunkBytes(fuzzChunkBytes),
	WithMaxReadBytes(fuzzReadBytes), WithConcurrency(1, 1)}

// heapAllocs returns the bytes allocated on the heap since the program
// started (runtime/metrics, no stop-the-world).
func heapAllocs() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// boundAllocs fails t when f allocates more than fuzzAllocBound bytes.
// Fuzzing runs one input at a time per process (-parallel 1), so the
// process-wide counter is f's.
func boundAllocs(t *testing.T, f func()) {
	t.Helper()
	before := heapAllocs()
	f()
	if n := heapAllocs() - before; n > fuzzAllocBound {
		t.Fatalf("one input allocated %d bytes, more than %d", n, fuzzAllocBound)
	}
}

// knownErr reports whether err wraps a sentinel that hostile metadata or
// chunk bytes may cause: this package's, or those of the codecs and
// sharding packages below it.
func knownErr(err error) bool {
	for _, s := range []error{ErrInvalidMetadata, ErrUnsupported, ErrTooLarge, ErrNodeType,
		codecs.ErrCorrupt, codecs.ErrChecksum, codecs.ErrUnknownCodec, codecs.ErrInvalidConfig, codecs.ErrVLenUnbound} {
		if errors.Is(err, s) {
			return true
		}
	}
	return false
}

// failed reports whether an open or a read failed, failing t when the
// error wraps no known sentinel.
func failed(t *testing.T, what string, err error) bool {
	t.Helper()
	if err != nil && !knownErr(err) {
		t.Fatalf("%s: error %v wraps no sentinel", what, err)
	}
	return err != nil
}

// smallSelection selects up to two elements from the start of every
// dimension.
func smallSelection(shape []int) []nd.Item {
	items := make([]nd.Item, len(shape))
	for d, n := range shape {
		items[d] = nd.Slice(0, min(n, 2), 1)
	}
	return items
}

// fuzzRead opens the array at "a" in st and reads from it: a small
// selection (checked against ReadBytesInto into a buffer), then everything, within
// the fuzz limits. It returns the array, or nil when it does not open.
func fuzzRead(t *testing.T, st *mem.Store, chunk []byte) *Array {
	t.Helper()
	ctx := context.Background()
	a, err := OpenArray(ctx, st, "a", fuzzOpts...)
	if failed(t, "open", err) {
		return nil
	}
	m := a.Metadata()
	for d, n := range m.GridShape() {
		if n < 0 || (m.Shape[d] > 0 && n == 0) {
			t.Fatalf("grid %v for shape %v", m.GridShape(), m.Shape)
		}
	}
	if len(chunk) > 0 {
		_ = st.Set(ctx, a.ChunkKey(make([]int, m.NDim())), chunk)
	}
	items := smallSelection(m.Shape)
	got, shape, err := a.ReadBytes(ctx, items...)
	if !failed(t, "small read", err) {
		sel, _ := a.Selection(items...)
		if want := nd.NumElements(sel.Shape()) * m.DataType.Size(); len(got) != want || !slices.Equal(shape, sel.Shape()) {
			t.Fatalf("small read: %d bytes of shape %v, want %d of %v", len(got), shape, want, sel.Shape())
		}
		again := make([]byte, len(got))
		if err := a.ReadBytesInto(ctx, again, items...); err != nil || string(again) != string(got) {
			t.Fatalf("ReadBytesInto differs from ReadBytes: %v", err)
		}
	}
	all, shape, err := a.ReadBytes(ctx)
	if !failed(t, "read all", err) {
		if len(all) > fuzzReadBytes || !slices.Equal(shape, m.Shape) {
			t.Fatalf("read all: %d bytes of shape %v (shape %v, limit %d)", len(all), shape, m.Shape, fuzzReadBytes)
		}
	} else if total, ok := arrayBytes(m); ok && total <= fuzzReadBytes && errors.Is(err, ErrTooLarge) {
		t.Fatalf("read all of %d bytes refused: %v", total, err)
	}
	bs := a.TileShape(fuzzReadBytes)
	for d, n := range bs {
		if n < 1 || (m.Shape[d] > 0 && n > m.Shape[d]) {
			t.Fatalf("TileShape = %v for shape %v", bs, m.Shape)
		}
	}
	tiles := 0
	for b, err := range a.Tiles(ctx, fuzzReadBytes) {
		if failed(t, "Tiles", err) {
			break
		}
		if len(b.Data) > fuzzReadBytes/2 {
			t.Fatalf("tile of %d bytes for a budget of %d", len(b.Data), fuzzReadBytes)
		}
		if tiles++; tiles == 2 {
			break
		}
	}
	return a
}

// arrayBytes returns the array's size in bytes when it fits an int64.
func arrayBytes(m *ArrayMetadata) (int64, bool) {
	n := int64(m.DataType.Size())
	for _, s := range m.Shape {
		if s != 0 && n > math.MaxInt64/int64(s) {
			return 0, false
		}
		n *= int64(s)
	}
	return n, true
}

// addFileSeeds adds, for every file called name under dir, add(its bytes,
// the bytes of the first chunk beside it when there is one).
func addFileSeeds(dir, name string, add func(doc, chunk []byte)) {
	_ = filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() != name {
			return nil
		}
		doc, err := os.ReadFile(path)
		if err != nil {
			return nil
		}
		var chunk []byte
		for _, k := range []string{"c/0/0", "c/0", "c/0/0/0", "0.0", "0", "0.0.0", "c"} {
			if b, err := os.ReadFile(filepath.Join(filepath.Dir(path), filepath.FromSlash(k))); err == nil && len(b) < 1<<16 {
				chunk = b
				break
			}
		}
		add(doc, chunk)
		return nil
	})
}

// FuzzOpenRead puts a fuzzed zarr.json (and a fuzzed first chunk) in a
// memory store, opens it and reads from it with the fuzz limits: the
// metadata -> open -> read path and its size arithmetic must never panic
// nor allocate more than fuzzAllocBound, and a read returns exactly the
// selection's size.
func FuzzOpenRead(f *testing.F) {
	addFileSeeds(refdata, MetadataKey, func(doc, chunk []byte) { f.Add(doc, chunk) })
	for _, dir := range []string{"../testdata/extdtypes", "../testdata/filters"} {
		addFileSeeds(dir, MetadataKey, func(doc, chunk []byte) { f.Add(doc, chunk) })
	}
	f.Fuzz(func(t *testing.T, doc, chunk []byte) {
		st := mem.New()
		_ = st.Set(context.Background(), "a/"+MetadataKey, doc)
		boundAllocs(t, func() { fuzzRead(t, st, chunk) })
	})
}

// FuzzV2ToV3 puts a fuzzed .zarray and .zattrs in a memory store, opens
// the array through the v2 -> v3 translation and reads from it as
// FuzzOpenRead does; the translated metadata must also survive a v3
// round trip.
func FuzzV2ToV3(f *testing.F) {
	addFileSeeds(refdata, V2ArrayKey, func(doc, chunk []byte) { f.Add(doc, []byte(`{"a": [1, 2.5, null]}`), chunk) })
	addFileSeeds("../testdata/compat", V2ArrayKey, func(doc, chunk []byte) { f.Add(doc, []byte(nil), chunk) })
	for _, dir := range []string{"../testdata/extdtypes", "../testdata/filters"} {
		addFileSeeds(dir, V2ArrayKey, func(doc, chunk []byte) { f.Add(doc, []byte(nil), chunk) })
	}
	f.Fuzz(func(t *testing.T, zarray, zattrs, chunk []byte) {
		ctx := context.Background()
		st := mem.New()
		_ = st.Set(ctx, "a/"+V2ArrayKey, zarray)
		if zattrs != nil {
			_ = st.Set(ctx, "a/"+V2AttrsKey, zattrs)
		}
		boundAllocs(t, func() {
			a := fuzzRead(t, st, chunk)
			if a == nil {
				return
			}
			doc, err := a.Metadata().Marshal()
			if err != nil {
				t.Fatalf("Marshal of the v3 view: %v", err)
			}
			m2, err := ParseArrayMetadata(doc)
			if err != nil {
				t.Fatalf("re-parse of the v3 view: %v\n%s", err, doc)
			}
			if doc2, err := m2.Marshal(); err != nil || string(doc2) != string(doc) {
				t.Fatalf("v3 view round trip differs (%v):\n%s\n%s", err, doc, doc2)
			}
		})
	})
}

// FuzzChunkKey checks chunk key encoding and parsing (chunkkey.go): a
// parsed key encodes back to itself, encoded coordinates parse back to
// themselves, and an encoding read from JSON validates and round-trips.
func FuzzChunkKey(f *testing.F) {
	f.Add(byte(0), "c/1/0", uint8(2), 1, 0, 7, []byte(`{"name":"default","configuration":{"separator":"/"}}`))
	f.Add(byte(1), "c.12.3.4", uint8(3), 12, 3, 4, []byte(`{"name":"default","configuration":{"separator":"."}}`))
	f.Add(byte(2), "1.0", uint8(2), 1, 0, 0, []byte(`{"name":"v2","configuration":{"separator":"."}}`))
	f.Add(byte(3), "0", uint8(0), 0, 0, 0, []byte(`"v2"`))
	f.Add(byte(0), "c", uint8(0), 0, 0, 0, []byte(`"default"`))
	f.Add(byte(2), "01.1", uint8(2), math.MaxInt, 0, 1, []byte(`{"name":"v2","must_understand":true}`))
	f.Fuzz(func(t *testing.T, which byte, key string, ndim uint8, c0, c1, c2 int, encJSON []byte) {
		encs := []ChunkKeyEncoding{DefaultKeyEncoding(), {KeyEncodingDefault, "."}, V2KeyEncoding("."), V2KeyEncoding("/")}
		e := encs[int(which)%len(encs)]
		n := int(ndim) % (MaxRank + 1)
		if coords, ok := e.ParseKey(key, n); ok {
			if len(coords) != n {
				t.Fatalf("ParseKey(%q, %d) = %v", key, n, coords)
			}
			for _, c := range coords {
				if c < 0 {
					t.Fatalf("ParseKey(%q) = %v: negative coordinate", key, coords)
				}
			}
			if back := e.Key(coords); back != key {
				t.Fatalf("Key(ParseKey(%q)) = %q", key, back)
			}
		}
		coords := []int{c0, c1, c2}[:min(n, 3)]
		for i, c := range coords {
			if c < 0 {
				coords[i] = -(c + 1)
			}
		}
		key = e.Key(coords)
		if back, ok := e.ParseKey(key, len(coords)); !ok || !slices.Equal(back, coords) {
			t.Fatalf("ParseKey(Key(%v) = %q) = %v, %v", coords, key, back, ok)
		}
		if string(e.AppendKey([]byte("x/"), coords)) != "x/"+key {
			t.Fatalf("AppendKey differs from Key")
		}
		var got ChunkKeyEncoding
		if err := got.UnmarshalJSON(encJSON); err != nil {
			if !errors.Is(err, ErrInvalidMetadata) && !errors.Is(err, ErrUnsupported) {
				t.Fatalf("UnmarshalJSON error %v wraps no sentinel", err)
			}
			return
		}
		if err := got.Validate(); err != nil {
			t.Fatalf("UnmarshalJSON accepted an invalid encoding %+v: %v", got, err)
		}
		out, err := got.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		var again ChunkKeyEncoding
		if err := again.UnmarshalJSON(out); err != nil || again != got {
			t.Fatalf("round trip %s: %+v, %v; want %+v", out, again, err, got)
		}
	})
}

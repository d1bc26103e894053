package zarr_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/mem"
	"github.com/gozarr/gozarr/zarr"
)

// arrayDoc is a v3 zarr.json with the given shape, data type and chunk
// shape (JSON lists) and plain little-endian bytes.
func arrayDoc(shape, dt, chunks string) string {
	return fmt.Sprintf(`{"zarr_format":3,"node_type":"array","shape":%s,"data_type":%q,
"chunk_grid":{"name":"regular","configuration":{"chunk_shape":%s}},
"chunk_key_encoding":{"name":"default"},"fill_value":0,
"codecs":[{"name":"bytes","configuration":{"endian":"little"}}]}`, shape, dt, chunks)
}

// memWith returns a mem store holding the given key, value pairs.
func memWith(t testing.TB, kv ...string) *mem.Store {
	t.Helper()
	st := mem.New()
	for i := 0; i+1 < len(kv); i += 2 {
		if err := st.Set(context.Background(), kv[i], []byte(kv[i+1])); err != nil {
			t.Fatal(err)
		}
	}
	return st
}

// need64 skips tests whose shapes do not fit a 32-bit int.
func need64(t *testing.T) {
	if strconv.IntSize < 64 {
		t.Skip("shapes beyond 2^31 elements need a 64-bit int")
	}
}

// noPanic runs f, turning a panic into a test failure with its message.
func noPanic(t *testing.T, what string, f func()) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Errorf("%s panicked: %v", what, r)
		}
	}()
	f()
}

// TestSizeOverflowRefusedAtOpen: arrays whose element count, byte size or
// chunk grid does not fit int64 are refused when opened, not read as
// empty (finding 1: [2^61] int64 is 2^64 bytes, which wrapped to 0).
func TestSizeOverflowRefusedAtOpen(t *testing.T) {
	ctx := context.Background()
	cases := []struct{ name, shape, dt, chunks string }{
		{"bytes wrap to 0", `[2305843009213693952]`, "int64", `[1024]`},
		{"bytes over int64", `[4611686018427387904, 3]`, "int16", `[1024, 3]`},
		{"grid rounding overflows", `[9223372036854775807]`, "uint8", `[2]`},
		{"elements over int64", `[4294967296, 4294967296]`, "uint8", `[1, 1]`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st := memWith(t, "a/zarr.json", arrayDoc(c.shape, c.dt, c.chunks))
			var a *zarr.Array
			var err error
			noPanic(t, "open", func() { a, err = zarr.OpenArray(ctx, st, "a") })
			if !errors.Is(err, zarr.ErrInvalidMetadata) {
				t.Fatalf("open = %v; want ErrInvalidMetadata", err)
			}
			if a != nil {
				t.Errorf("open returned an array with an error")
			}
		})
	}
	// The largest shapes that do fit still open, and report their grid
	// without overflow.
	// (On 64-bit platforms: [9223372036854775806], grid [4611686018427387903].)
	st := memWith(t, "a/zarr.json", arrayDoc(fmt.Sprintf("[%d]", math.MaxInt-1), "uint8", `[2]`))
	a, err := zarr.OpenArray(ctx, st, "a")
	if err != nil {
		t.Fatalf("open the largest array: %v", err)
	}
	if g := a.Metadata().GridShape(); g[0] != (math.MaxInt-1)/2 {
		t.Errorf("GridShape = %v, want [%d]", g, (math.MaxInt-1)/2)
	}
}

// TestHugeReadRefused: reading more than the platform can allocate, or
// than WithMaxReadBytes, is a clear ErrTooLarge before any allocation
// (finding 2: 10^18 uint8 panicked with "makeslice: len out of range").
func TestHugeReadRefused(t *testing.T) {
	need64(t)
	ctx := context.Background()
	st := memWith(t, "a/zarr.json", arrayDoc(`[1000000000000000000]`, "uint8", `[1000000]`))
	a, err := zarr.OpenArray(ctx, st, "a")
	if err != nil {
		t.Fatal(err)
	}
	noPanic(t, "ReadBytes", func() {
		if b, _, err := a.ReadBytes(ctx); !errors.Is(err, zarr.ErrTooLarge) || b != nil {
			t.Errorf("ReadBytes = %d bytes, %v; want ErrTooLarge", len(b), err)
		}
	})
	noPanic(t, "Read[uint8]", func() {
		if v, _, err := zarr.Read[uint8](ctx, a); !errors.Is(err, zarr.ErrTooLarge) || v != nil {
			t.Errorf("Read[uint8] = %d values, %v; want ErrTooLarge", len(v), err)
		}
	})
	noPanic(t, "Read[int64]", func() {
		if v, _, err := zarr.Read[int64](ctx, a); !errors.Is(err, zarr.ErrTypeMismatch) || v != nil {
			t.Errorf("Read[int64] = %d values, %v; want ErrTypeMismatch", len(v), err)
		}
	})
	// A small selection of the same array reads (as fill).
	b, shape, err := a.ReadBytes(ctx, nd.Slice(5, 9, 1))
	if err != nil || len(b) != 4 || shape[0] != 4 {
		t.Errorf("small read = %v %v, %v", b, shape, err)
	}
	// WithMaxReadBytes caps what ReadBytes and Read allocate.
	small, err := zarr.OpenArray(ctx, st, "a", zarr.WithMaxReadBytes(1000))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		n    int
		want error
	}{{1000, nil}, {1001, zarr.ErrTooLarge}} {
		_, _, err := small.ReadBytes(ctx, nd.Slice(0, c.n, 1))
		_, _, terr := zarr.Read[uint8](ctx, small, nd.Slice(0, c.n, 1))
		if !errors.Is(err, c.want) || !errors.Is(terr, c.want) || (c.want == nil && (err != nil || terr != nil)) {
			t.Errorf("read %d bytes with a 1000-byte limit: %v, %v; want %v", c.n, err, terr, c.want)
		}
		if c.want != nil && !strings.Contains(err.Error(), "WithMaxReadBytes") {
			t.Errorf("error does not name the option: %v", err)
		}
	}
}

// rangeStore records the ranges metadata reads ask for.
type rangeStore struct {
	*mem.Store
	mu     sync.Mutex
	ranges map[string]string
}

func (r *rangeStore) Get(ctx context.Context, key string, br store.ByteRange) ([]byte, error) {
	r.mu.Lock()
	if r.ranges == nil {
		r.ranges = map[string]string{}
	}
	r.ranges[key] = br.String()
	r.mu.Unlock()
	return r.Store.Get(ctx, key, br)
}

// bigDoc returns a valid document of at least n bytes: doc with a long
// string attribute.
func bigDoc(doc string, n int) string {
	return strings.Replace(doc, `"zarr_format"`, `"attributes":{"pad":"`+strings.Repeat("x", n)+`"},"zarr_format"`, 1)
}

// TestMetadataSizeLimit: metadata documents are read by range, at most
// the limit plus one byte, and a larger one is ErrTooLarge naming the key
// and the limit (finding 4: a 1 GiB zarr.json was read whole).
func TestMetadataSizeLimit(t *testing.T) {
	ctx := context.Background()
	const limit = 1 << 10
	doc := arrayDoc(`[4]`, "uint8", `[2]`)
	v2 := `{"zarr_format":2,"shape":[4],"chunks":[2],"dtype":"|u1","fill_value":0,"order":"C","filters":null,"compressor":null}`
	pad := strings.Repeat(" ", limit)
	cases := []struct {
		name, key string
		kv        []string
		open      func(st store.Reader, opts ...zarr.Option) error
	}{
		{"v3 array", "a/zarr.json", []string{"a/zarr.json", bigDoc(doc, limit)}, openArray},
		{"v3 group", "a/zarr.json", []string{"a/zarr.json", bigDoc(`{"zarr_format":3,"node_type":"group"}`, limit)}, openGroup},
		{"v3 node type", "a/zarr.json", []string{"a/zarr.json", bigDoc(doc, limit)}, nodeType},
		{"v2 .zarray", "a/.zarray", []string{"a/.zarray", v2 + pad}, openArray},
		{"v2 .zattrs", "a/.zattrs", []string{"a/.zarray", v2, "a/.zattrs", `{"a":1}` + pad}, openArray},
		{"v2 .zgroup", "a/.zgroup", []string{"a/.zgroup", `{"zarr_format":2}` + pad}, openGroup},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st := &rangeStore{Store: memWith(t, c.kv...)}
			err := c.open(st, zarr.WithMaxMetadataBytes(limit))
			if !errors.Is(err, zarr.ErrTooLarge) {
				t.Fatalf("open = %v; want ErrTooLarge", err)
			}
			if msg := err.Error(); strings.Count(msg, c.key) != 1 || !strings.Contains(msg, "1024") || !strings.Contains(msg, "WithMaxMetadataBytes") {
				t.Errorf("error %q should name %s once, the limit 1024 and the option", msg, c.key)
			}
			if got, want := st.ranges[c.key], "bytes=0-1024"; got != want {
				t.Errorf("%s read as %s, want %s", c.key, got, want)
			}
			if err := c.open(st, zarr.WithMaxMetadataBytes(4*limit)); err != nil {
				t.Errorf("open with a larger limit: %v", err)
			}
		})
	}
	// The default limit is DefaultMaxMetadataBytes.
	st := &rangeStore{Store: memWith(t, "a/zarr.json", bigDoc(doc, zarr.DefaultMaxMetadataBytes))}
	if err := openArray(st); !errors.Is(err, zarr.ErrTooLarge) {
		t.Errorf("open over the default limit = %v", err)
	}
	if got, want := st.ranges["a/zarr.json"], fmt.Sprintf("bytes=0-%d", zarr.DefaultMaxMetadataBytes); got != want {
		t.Errorf("read as %s, want %s", got, want)
	}
	// Children of a group opened with a limit inherit it.
	st = &rangeStore{Store: memWith(t, "zarr.json", `{"zarr_format":3,"node_type":"group"}`,
		"a/zarr.json", bigDoc(doc, limit))}
	g, err := zarr.OpenGroup(ctx, st, "", zarr.WithMaxMetadataBytes(limit))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.Children(ctx); !errors.Is(err, zarr.ErrTooLarge) {
		t.Errorf("Children = %v; want ErrTooLarge", err)
	}
	if _, err := g.OpenArray(ctx, "a"); !errors.Is(err, zarr.ErrTooLarge) {
		t.Errorf("Group.OpenArray = %v; want ErrTooLarge", err)
	}
	if _, err := g.OpenArray(ctx, "a", zarr.WithMaxMetadataBytes(4*limit)); err != nil {
		t.Errorf("Group.OpenArray with its own limit: %v", err)
	}
}

func openArray(st store.Reader, opts ...zarr.Option) error {
	_, err := zarr.OpenArray(context.Background(), st, "a", opts...)
	return err
}

func openGroup(st store.Reader, opts ...zarr.Option) error {
	_, err := zarr.OpenGroup(context.Background(), st, "a", opts...)
	return err
}

func nodeType(st store.Reader, opts ...zarr.Option) error {
	_, err := zarr.NodeTypeAt(context.Background(), st, "a", opts...)
	return err
}

// TestChunkDecodeLimit: the per-chunk decode limit is an open option
// (finding 10), MaxDecodedChunkBytes by default, and the error says which
// limit and how to raise it.
func TestChunkDecodeLimit(t *testing.T) {
	need64(t)
	ctx := context.Background()
	// Chunks of 3e9 uint8: under the default 4 GiB, over a 512 MiB limit.
	st := memWith(t, "a/zarr.json", arrayDoc(`[6000000000]`, "uint8", `[3000000000]`))
	if _, err := zarr.OpenArray(ctx, st, "a"); err != nil {
		t.Fatalf("open with the default limit: %v", err)
	}
	_, err := zarr.OpenArray(ctx, st, "a", zarr.WithMaxChunkBytes(512<<20))
	if !errors.Is(err, zarr.ErrChunkTooLarge) || !errors.Is(err, zarr.ErrTooLarge) || !errors.Is(err, zarr.ErrUnsupported) {
		t.Fatalf("open with a 512 MiB limit = %v; want ErrChunkTooLarge", err)
	}
	for _, s := range []string{"3000000000", "536870912", "WithMaxChunkBytes"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not say %s", err, s)
		}
	}
	// Exactly at the limit opens.
	if _, err := zarr.OpenArray(ctx, st, "a", zarr.WithMaxChunkBytes(3000000000)); err != nil {
		t.Errorf("open at the limit: %v", err)
	}
	// Over the default.
	st = memWith(t, "a/zarr.json", arrayDoc(`[8589934592]`, "uint8", `[4294967297]`))
	if _, err := zarr.OpenArray(ctx, st, "a"); !errors.Is(err, zarr.ErrChunkTooLarge) {
		t.Errorf("open over the default limit = %v", err)
	}
}

// TestBlocksOfEmptyHugeArray: an array with no elements but huge other
// dimensions has a block shape (arithmetic saturates instead of wrapping to
// a division by zero) and Blocks yields nothing.
func TestBlocksOfEmptyHugeArray(t *testing.T) {
	need64(t)
	ctx := context.Background()
	st := memWith(t, "a/zarr.json", arrayDoc(`[0, 1099511627776, 1099511627776]`, "uint8", `[1, 1048576, 1]`))
	a, err := zarr.OpenArray(ctx, st, "a")
	if err != nil {
		t.Fatal(err)
	}
	noPanic(t, "TileShape", func() {
		b := a.TileShape(0)
		if len(b) != 3 || b[0] < 1 || b[1] < 1 || b[2] < 1 || int64(b[1])*int64(b[2]) > zarr.DefaultIterBudget/2 {
			t.Errorf("TileShape = %v", b)
		}
	})
	noPanic(t, "Blocks", func() {
		for b, err := range a.Tiles(ctx, 0) {
			t.Errorf("Blocks yielded %v, %v", b.Shape, err)
		}
	})
}

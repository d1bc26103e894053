package zarr_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/internal/npy"
	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/fs"
	"github.com/gozarr/gozarr/store/mem"
	"github.com/gozarr/gozarr/store/s3"
	"github.com/gozarr/gozarr/store/s3/s3test"
	"github.com/gozarr/gozarr/zarr"
)

// consDir holds groups consolidated by zarr-python 3.4.1
// (testdata/consolidated/make_consolidated.py).
const consDir = "../testdata/consolidated"

// countReader records the keys of the Get calls that reach a store. It is
// safe for concurrent use.
type countReader struct {
	store.Reader
	mu   sync.Mutex
	keys []string
}

func (c *countReader) Get(ctx context.Context, key string, r store.ByteRange) ([]byte, error) {
	c.mu.Lock()
	c.keys = append(c.keys, key)
	c.mu.Unlock()
	return c.Reader.Get(ctx, key, r)
}

// TestConsolidatedFixtures opens zarr-python's consolidated v2 and v3
// groups and reads every array through the group: the group document is
// the only read before the chunks, and the values match zarr-python's.
func TestConsolidatedFixtures(t *testing.T) {
	ctx := context.Background()
	base, err := fs.New(consDir, fs.ReadOnly())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		fmt  int
		doc  string // the one metadata document read
	}{{"v3_group.zarr", 3, "v3_group.zarr/zarr.json"}, {"v2_group.zarr", 2, "v2_group.zarr/.zmetadata"}} {
		t.Run(c.name, func(t *testing.T) {
			st := &countReader{Reader: base}
			g, err := zarr.OpenGroup(ctx, st, c.name, zarr.WithZarrFormat(c.fmt))
			if err != nil {
				t.Fatal(err)
			}
			if ok, n := g.Consolidated(); !ok || n != 5 {
				t.Fatalf("Consolidated() = %v, %d; want true, 5", ok, n)
			}
			if g.Attributes()["title"] != "fixture" {
				t.Errorf("attributes %v", g.Attributes())
			}
			kids, err := g.Children(ctx)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, k := range kids {
				names = append(names, k.Name+":"+string(k.Type))
			}
			if want := []string{"names:array", "sub:group", "temp:array", "time:array"}; !slices.Equal(names, want) {
				t.Errorf("children %v, want %v", names, want)
			}
			arrays := map[string]*zarr.Array{}
			for _, n := range []string{"temp", "time", "names"} {
				if arrays[n], err = g.OpenArray(ctx, n); err != nil {
					t.Fatal(err)
				}
			}
			sub, err := g.OpenGroup(ctx, "sub")
			if err != nil {
				t.Fatal(err)
			}
			if arrays["sub_mask"], err = sub.OpenArray(ctx, "mask"); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(st.keys, []string{c.doc}) {
				t.Errorf("metadata reads %v, want only %s", st.keys, c.doc)
			}
			if arrays["temp"].Attributes()["units"] != "K" {
				t.Errorf("temp attributes %v", arrays["temp"].Attributes())
			}
			for n, a := range arrays {
				got, shape, err := a.ReadBytes(ctx)
				if err != nil {
					t.Fatal(err)
				}
				want, err := npy.ReadFile(filepath.Join(consDir, c.name+"."+n+".npy"))
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(shape, want.Shape) || string(got) != string(want.Data) || a.Metadata().DataType.NumpyDescr() != want.Descr {
					t.Errorf("%s: %v %x (%s), want %v %x (%s)", n, shape, got, a.Metadata().DataType.NumpyDescr(), want.Shape, want.Data, want.Descr)
				}
			}
			if err := g.VerifyConsolidated(ctx); err != nil {
				t.Errorf("fresh consolidated metadata reported stale: %v", err)
			}
		})
	}
}

// TestConsolidatedStale opens the groups changed after consolidation: the
// check names the changed, gone and unlisted nodes, and
// WithVerifiedConsolidated refuses to open them.
func TestConsolidatedStale(t *testing.T) {
	ctx := context.Background()
	st, err := fs.New(consDir, fs.ReadOnly())
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"v3_stale.zarr", "v2_stale.zarr"} {
		g, err := zarr.OpenGroup(ctx, st, name)
		if err != nil {
			t.Fatal(err)
		}
		err = g.VerifyConsolidated(ctx)
		var se *zarr.StaleError
		if !errors.Is(err, zarr.ErrStaleConsolidated) || !errors.As(err, &se) {
			t.Fatalf("%s: VerifyConsolidated = %v, want a StaleError", name, err)
		}
		if !slices.Equal(se.Changed, []string{"temp"}) || !slices.Equal(se.Gone, []string{"names"}) || !slices.Equal(se.Unlisted, []string{"extra"}) {
			t.Errorf("%s: changed %v gone %v unlisted %v", name, se.Changed, se.Gone, se.Unlisted)
		}
		if !strings.Contains(err.Error(), "1 changed (temp)") {
			t.Errorf("%s: message %q", name, err)
		}
		if _, err := zarr.OpenGroup(ctx, st, name, zarr.WithVerifiedConsolidated()); !errors.Is(err, zarr.ErrStaleConsolidated) {
			t.Errorf("%s: verified open = %v", name, err)
		}
		// Without consolidated metadata the group sees the stored nodes.
		g2, err := zarr.OpenGroup(ctx, st, name, zarr.WithoutConsolidated())
		if err != nil {
			t.Fatal(err)
		}
		if ok, _ := g2.Consolidated(); ok {
			t.Errorf("%s: WithoutConsolidated kept it", name)
		}
		a, err := g2.OpenArray(ctx, "temp")
		if err != nil || a.Attributes()["units"] != "degC" {
			t.Errorf("%s: stored temp attributes %v, %v", name, a.Attributes(), err)
		}
	}
}

// TestConsolidateWrite consolidates groups gozarr wrote (v3 and v2), opens
// them from the new document alone and checks the documents match the
// stored ones.
func TestConsolidateWrite(t *testing.T) {
	ctx := context.Background()
	for _, format := range []int{3, 2} {
		st := mem.New()
		if _, err := createGroup(ctx, st, "root", format, map[string]any{"k": "v"}); err != nil {
			t.Fatal(err)
		}
		if _, err := createGroup(ctx, st, "root/g", format, nil); err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{"root/a", "root/g/b"} {
			if _, err := createArray(ctx, st, p, format); err != nil {
				t.Fatal(err)
			}
		}
		g, err := zarr.Consolidate(ctx, st, "root")
		if err != nil {
			t.Fatalf("v%d: %v", format, err)
		}
		if ok, n := g.Consolidated(); !ok || n != 3 {
			t.Errorf("v%d: Consolidated() = %v, %d", format, ok, n)
		}
		if err := g.VerifyConsolidated(ctx); err != nil {
			t.Errorf("v%d: %v", format, err)
		}
		cr := &countReader{Reader: st}
		g, err = zarr.OpenGroup(ctx, cr, "root", zarr.WithZarrFormat(format))
		if err != nil {
			t.Fatal(err)
		}
		sub, err := g.OpenGroup(ctx, "g")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := sub.OpenArray(ctx, "b"); err != nil {
			t.Fatal(err)
		}
		if _, err := g.OpenArray(ctx, "g/b"); err != nil {
			t.Fatal(err)
		}
		if len(cr.keys) != 1 {
			t.Errorf("v%d: reads %v, want one", format, cr.keys)
		}
		if _, err := g.OpenArray(ctx, "g"); !errors.Is(err, zarr.ErrNodeType) {
			t.Errorf("v%d: group opened as array: %v", format, err)
		}
		// A node added after consolidating is reported, and still opens
		// from the store.
		if _, err := createArray(ctx, st, "root/late", format); err != nil {
			t.Fatal(err)
		}
		var se *zarr.StaleError
		if g, err = zarr.OpenGroup(ctx, st, "root"); err != nil { // over the listing store
			t.Fatal(err)
		}
		if err := g.VerifyConsolidated(ctx); !errors.As(err, &se) || !slices.Equal(se.Unlisted, []string{"late"}) {
			t.Errorf("v%d: after adding: %v", format, err)
		}
		if _, err := g.OpenArray(ctx, "late"); err != nil {
			t.Errorf("v%d: late array: %v", format, err)
		}
	}
}

func createGroup(ctx context.Context, st store.Store, p string, format int, attrs map[string]any) (*zarr.Group, error) {
	if format == 2 {
		return zarr.CreateGroupV2(ctx, st, p, attrs)
	}
	return zarr.CreateGroup(ctx, st, p, attrs)
}

func createArray(ctx context.Context, st store.Store, p string, format int) (*zarr.Array, error) {
	if format == 2 {
		return zarr.CreateArrayV2(ctx, st, p, &zarr.ArrayMetadataV2{Shape: []int{4}, Chunks: []int{2}, DType: "<i4"})
	}
	meta, err := zarr.NewArrayMetadata([]int{4}, dtype.TypeInt32, []int{2})
	if err != nil {
		return nil, err
	}
	return zarr.CreateArray(ctx, st, p, meta)
}

// TestConsolidatedS3Requests opens a consolidated group of 100 arrays on
// the S3 fake and every array in it: one GET in all (the group's zarr.json,
// or .zmetadata for v2 with WithZarrFormat(2)), against more than 100
// without consolidated metadata.
func TestConsolidatedS3Requests(t *testing.T) {
	ctx := context.Background()
	srv := s3test.NewFake(t, "gozarr")
	for _, format := range []int{3, 2} {
		prefix := fmt.Sprintf("cons%d", format)
		up := srv.Store(t, prefix)
		if _, err := createGroup(ctx, up, "g", format, nil); err != nil {
			t.Fatal(err)
		}
		for i := range 100 {
			if _, err := createArray(ctx, up, fmt.Sprintf("g/a%03d", i), format); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := zarr.Consolidate(ctx, up, "g"); err != nil {
			t.Fatal(err)
		}
		rec := s3test.NewRecorder(nil)
		st, err := s3.Open(ctx, srv.Bucket, prefix, srv.Options(s3.WithHTTPClient(rec.Client()))...)
		if err != nil {
			t.Fatal(err)
		}
		openAll := func(opts ...zarr.Option) int {
			rec.Reset()
			g, err := zarr.OpenGroup(ctx, st, "g", opts...)
			if err != nil {
				t.Fatal(err)
			}
			kids, err := g.Children(ctx)
			if err != nil || len(kids) != 100 {
				t.Fatalf("%d children, %v", len(kids), err)
			}
			for _, k := range kids {
				if _, err := g.OpenArray(ctx, k.Name); err != nil {
					t.Fatal(err)
				}
			}
			return rec.Count("")
		}
		if n := openAll(zarr.WithZarrFormat(format)); n != 1 || rec.Count(http.MethodGet) != 1 {
			t.Errorf("v%d consolidated: %d requests, want 1 GET: %v", format, n, rec.Requests(""))
		}
		if n := openAll(zarr.WithoutConsolidated()); n <= 100 {
			t.Errorf("v%d without consolidated metadata: only %d requests", format, n)
		}
	}
}

package zarr_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/mem"
	"github.com/gozarr/gozarr/zarr"
)

// createRef is what zarr-python 3 wrote and refused
// (testdata/create/make_create.py).
type createRef struct {
	Parents        map[string]map[string]any `json:"parents"`
	Refused        map[string]*string        `json:"refused"`
	AfterOverwrite []string                  `json:"after_overwrite"`
}

func loadCreateRef(t *testing.T) createRef {
	t.Helper()
	b, err := os.ReadFile("../testdata/create/create.json")
	if err != nil {
		t.Fatal(err)
	}
	var r createRef
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

func int32Meta(t *testing.T, shape ...int) *zarr.ArrayMetadata {
	t.Helper()
	m, err := zarr.NewArrayMetadata(shape, dtype.TypeInt32, []int{2})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestCreateParentGroups: CreateArray at x/y/z writes the groups
// zarr-python writes (the root, x, x/y), with the same documents.
func TestCreateParentGroups(t *testing.T) {
	ctx := context.Background()
	ref := loadCreateRef(t)
	st := mem.New()
	if _, err := zarr.CreateArray(ctx, st, "x/y/z", int32Meta(t, 4)); err != nil {
		t.Fatal(err)
	}
	var got []string
	for k, err := range st.List(ctx, "") {
		if err != nil {
			t.Fatal(err)
		}
		if k != "x/y/z/zarr.json" {
			got = append(got, k)
		}
	}
	var want []string
	for k, doc := range ref.Parents {
		want = append(want, k)
		b, err := st.Get(ctx, k, store.ByteRange{})
		if err != nil {
			t.Fatalf("%s: %v", k, err)
		}
		var have map[string]any
		if err := json.Unmarshal(b, &have); err != nil {
			t.Fatal(err)
		}
		hb, _ := json.Marshal(have)
		wb, _ := json.Marshal(doc)
		if string(hb) != string(wb) {
			t.Errorf("%s: %s, zarr-python wrote %s", k, hb, wb)
		}
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("keys besides the array's %v, zarr-python wrote %v", got, want)
	}
	g, err := zarr.OpenGroup(ctx, st, "")
	if err != nil {
		t.Fatal(err)
	}
	kids, err := g.Children(ctx)
	if err != nil || len(kids) != 1 || kids[0].Name != "x" {
		t.Errorf("root children %v, %v", kids, err)
	}
}

// TestCreateRefusals: the creates zarr-python refuses are refused, with
// nothing written.
func TestCreateRefusals(t *testing.T) {
	ctx := context.Background()
	ref := loadCreateRef(t)
	st := mem.New()
	if _, err := zarr.CreateArray(ctx, st, "x/y/z", int32Meta(t, 4)); err != nil {
		t.Fatal(err)
	}
	before := keysOf(t, st)
	cases := map[string]struct {
		fn   func() error
		want error
	}{
		"array_over_array":   {func() error { _, err := zarr.CreateArray(ctx, st, "x/y/z", int32Meta(t, 4)); return err }, zarr.ErrNodeExists},
		"array_inside_array": {func() error { _, err := zarr.CreateArray(ctx, st, "x/y/z/w", int32Meta(t, 4)); return err }, zarr.ErrNodeType},
		"group_inside_array": {func() error { _, err := zarr.CreateGroup(ctx, st, "x/y/z/g", nil); return err }, zarr.ErrNodeType},
		"group_over_group":   {func() error { _, err := zarr.CreateGroup(ctx, st, "x/y", nil); return err }, zarr.ErrNodeExists},
		"array_over_group":   {func() error { _, err := zarr.CreateArray(ctx, st, "x/y", int32Meta(t, 4)); return err }, zarr.ErrNodeExists},
	}
	for name, c := range cases {
		if ref.Refused[name] == nil {
			t.Fatalf("%s: zarr-python accepts it; the reference changed", name)
		}
		if err := c.fn(); !errors.Is(err, c.want) {
			t.Errorf("%s (zarr-python: %s): %v, want %v", name, *ref.Refused[name], err, c.want)
		}
	}
	if after := keysOf(t, st); !slices.Equal(before, after) {
		t.Errorf("refused creates wrote keys: %v, then %v", before, after)
	}
	// The v2 creates refuse the same.
	if _, err := zarr.CreateArrayV2(ctx, st, "x/y/z/v", &zarr.ArrayMetadataV2{Shape: []int{1}, Chunks: []int{1}, DataType: dtype.TypeInt8}); !errors.Is(err, zarr.ErrNodeType) {
		t.Errorf("v2 array inside an array: %v", err)
	}
	if _, err := zarr.CreateGroupV2(ctx, st, "x/y/z/v", nil); !errors.Is(err, zarr.ErrNodeType) {
		t.Errorf("v2 group inside an array: %v", err)
	}
}

// TestCreateOverwrite: with Overwrite the old array's chunks go, as
// zarr-python's overwrite=True leaves only the new zarr.json.
func TestCreateOverwrite(t *testing.T) {
	ctx := context.Background()
	ref := loadCreateRef(t)
	st := mem.New()
	a, err := zarr.CreateArray(ctx, st, "o", int32Meta(t, 4))
	if err != nil {
		t.Fatal(err)
	}
	if err := zarr.Write(ctx, a, []int32{1, 2, 3, 4}); err != nil {
		t.Fatal(err)
	}
	b, err := zarr.CreateArray(ctx, st, "o", int32Meta(t, 2), zarr.Overwrite())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for k, err := range st.List(ctx, "o/") {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, k[len("o/"):])
	}
	if !slices.Equal(got, ref.AfterOverwrite) {
		t.Errorf("after overwrite %v, zarr-python leaves %v", got, ref.AfterOverwrite)
	}
	vals, _, err := zarr.Read[int32](ctx, b)
	if err != nil || !slices.Equal(vals, []int32{0, 0}) {
		t.Errorf("overwritten array reads %v, %v", vals, err)
	}
}

// TestCreateChecksEncodeSettings: a compression level out of range fails
// CreateArray before anything is written (it used to fail on the first
// non-fill Write, after zarr.json).
func TestCreateChecksEncodeSettings(t *testing.T) {
	ctx := context.Background()
	zs, _ := codecs.NewZstd(30, false)
	for _, sharded := range []bool{false, true} {
		opts, chunks := []zarr.MetadataOption{zarr.Compress(zs)}, []int{4}
		if sharded {
			opts, chunks = append(opts, zarr.Shards(4)), []int{2}
		}
		m, err := zarr.NewArrayMetadata([]int{8}, dtype.TypeInt32, chunks, opts...)
		if err != nil {
			t.Fatal(err)
		}
		st := mem.New()
		if _, err := zarr.CreateArray(ctx, st, "a", m); !errors.Is(err, codecs.ErrInvalidConfig) {
			t.Errorf("sharded %v: zstd level 30: %v", sharded, err)
		}
		if k := keysOf(t, st); len(k) != 0 {
			t.Errorf("sharded %v: refused create wrote %v", sharded, k)
		}
	}
}

func keysOf(t *testing.T, st store.Lister) []string {
	t.Helper()
	var out []string
	for k, err := range st.List(context.Background(), "") {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, k)
	}
	return out
}

// TestDeleteNode deletes a node and what is below it, and nothing else.
func TestDeleteNode(t *testing.T) {
	ctx := context.Background()
	st := mem.New()
	for _, p := range []string{"g/a", "g/b/c", "h"} {
		a, err := zarr.CreateArray(ctx, st, p, int32Meta(t, 4))
		if err != nil {
			t.Fatal(err)
		}
		if err := zarr.Write(ctx, a, []int32{1, 2, 3, 4}); err != nil {
			t.Fatal(err)
		}
	}
	if err := zarr.DeleteNode(ctx, st, "g"); err != nil {
		t.Fatal(err)
	}
	want := []string{"h/c/0", "h/c/1", "h/zarr.json", "zarr.json"}
	if got := keysOf(t, st); !slices.Equal(got, want) {
		t.Errorf("after DeleteNode(g): %v, want %v", got, want)
	}
}

// TestGroupCreate: Group.CreateGroup and Group.CreateArray write exactly
// what the package functions write for the joined path (whose documents
// TestCreateParentGroups checks against zarr-python's), refuse v3 children
// in a v2 group and a group opened over a read-only store.
func TestGroupCreate(t *testing.T) {
	ctx := context.Background()
	byPath, byGroup := mem.New(), mem.New()
	if _, err := zarr.CreateArray(ctx, byPath, "x/y/z", int32Meta(t, 4)); err != nil {
		t.Fatal(err)
	}
	root, err := zarr.CreateGroup(ctx, byGroup, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	x, err := root.CreateGroup(ctx, "x", nil)
	if err != nil {
		t.Fatal(err)
	}
	a, err := x.CreateArray(ctx, "y/z", int32Meta(t, 4))
	if err != nil {
		t.Fatal(err)
	}
	if a.Path() != "x/y/z" {
		t.Errorf("path %q, want x/y/z", a.Path())
	}
	keys := func(st *mem.Store) map[string]string {
		m := map[string]string{}
		for k, err := range st.List(ctx, "") {
			if err != nil {
				t.Fatal(err)
			}
			b, err := st.Get(ctx, k, store.ByteRange{})
			if err != nil {
				t.Fatal(err)
			}
			m[k] = string(b)
		}
		return m
	}
	want, got := keys(byPath), keys(byGroup)
	if len(want) != 4 || len(got) != len(want) {
		t.Fatalf("keys %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %s, want %s", k, got[k], v)
		}
	}
	if _, err := x.CreateArray(ctx, "y/z", int32Meta(t, 4)); !errors.Is(err, zarr.ErrNodeExists) {
		t.Errorf("second CreateArray: %v, want ErrNodeExists", err)
	}

	v2 := mem.New()
	g2, err := zarr.CreateGroupV2(ctx, v2, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g2.CreateArray(ctx, "a", int32Meta(t, 4)); !errors.Is(err, zarr.ErrNodeType) {
		t.Errorf("v3 array in a v2 group: %v, want ErrNodeType", err)
	}
	if _, err := g2.CreateGroup(ctx, "g", nil); !errors.Is(err, zarr.ErrNodeType) {
		t.Errorf("v3 group in a v2 group: %v, want ErrNodeType", err)
	}

	ro, err := zarr.OpenGroup(ctx, readOnly{byGroup}, "x")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ro.CreateGroup(ctx, "w", nil); !errors.Is(err, store.ErrReadOnly) {
		t.Errorf("CreateGroup over a read-only store: %v, want ErrReadOnly", err)
	}
}

// readOnly hides every method of a store but store.Reader's.
type readOnly struct{ store.Reader }

// TestTypedErrorsInElements: a typed Write of the wrong length counts
// elements of the array's type, not the bytes the engine sees, and a wrong
// Go type names the array's type first (trial F24: "data holds 12 bytes,
// selection needs 16"; "Go type float64 is float64, array ... is float32").
func TestTypedErrorsInElements(t *testing.T) {
	ctx := context.Background()
	m, err := zarr.NewArrayMetadata([]int{4}, dtype.TypeFloat32, []int{2})
	if err != nil {
		t.Fatal(err)
	}
	a, err := zarr.CreateArray(ctx, mem.New(), "temperature", m)
	if err != nil {
		t.Fatal(err)
	}
	err = zarr.Write(ctx, a, []float32{1, 2, 3})
	if !errors.Is(err, nd.ErrInvalidSelection) || !strings.Contains(err.Error(), "3 float32 values, selection [4] needs 4") {
		t.Errorf("short write: %v", err)
	}
	err = zarr.Write(ctx, a, []float64{1, 2, 3, 4})
	if !errors.Is(err, zarr.ErrTypeMismatch) || !strings.Contains(err.Error(), `array "temperature" holds float32; Go type float64 is for float64 arrays`) {
		t.Errorf("wrong type: %v", err)
	}
	if err := zarr.Write(ctx, a, []float32{1, 2, 3, 4}); err != nil {
		t.Fatal(err)
	}
}

// TestShardedShapeErrorNamesInner: the error for inner chunks that do not
// divide the shard calls them the inner chunk shape (trial F24: it said
// "chunk_shape [7 7]", read as the shape given to NewArrayMetadata).
func TestShardedShapeErrorNamesInner(t *testing.T) {
	_, err := zarr.NewArrayMetadata([]int{60, 60}, dtype.TypeFloat32, []int{7, 7}, zarr.Shards(30, 30))
	if !errors.Is(err, codecs.ErrInvalidConfig) || !strings.Contains(err.Error(), "shard shape [30 30] is not a multiple of the inner chunk shape [7 7]") {
		t.Errorf("got %v", err)
	}
}

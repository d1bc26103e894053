package zarr_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/gozarr/gozarr/store/fs"
	"github.com/gozarr/gozarr/store/mem"
	"github.com/gozarr/gozarr/zarr"
)

// TestOpenNodeTypes checks that opening a node as the wrong type, or a path
// with no node, gives the documented sentinel, for v3 and v2 hierarchies.
func TestOpenNodeTypes(t *testing.T) {
	ctx := context.Background()
	st, err := fs.New(refDir, fs.ReadOnly())
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range []struct{ group, array string }{
		{"v3_group.zarr", "v3_group.zarr/mask"},
		{"v2_group.zarr", "v2_group.zarr/flags"},
	} {
		if _, err := zarr.OpenGroup(ctx, st, h.group); err != nil {
			t.Errorf("open group %s: %v", h.group, err)
		}
		if _, err := zarr.OpenArray(ctx, st, h.array); err != nil {
			t.Errorf("open array %s: %v", h.array, err)
		}
		if _, err := zarr.OpenArray(ctx, st, h.group); !errors.Is(err, zarr.ErrNodeType) {
			t.Errorf("open group %s as array: %v, want ErrNodeType", h.group, err)
		}
		if _, err := zarr.OpenGroup(ctx, st, h.array); !errors.Is(err, zarr.ErrNodeType) {
			t.Errorf("open array %s as group: %v, want ErrNodeType", h.array, err)
		}
		for _, missing := range []string{h.group + "/nothing", h.array + "/c"} {
			if _, err := zarr.OpenArray(ctx, st, missing); !errors.Is(err, zarr.ErrNodeNotFound) {
				t.Errorf("open %s: %v, want ErrNodeNotFound", missing, err)
			}
			if _, err := zarr.OpenGroup(ctx, st, missing); !errors.Is(err, zarr.ErrNodeNotFound) {
				t.Errorf("open group %s: %v, want ErrNodeNotFound", missing, err)
			}
		}
	}
	g, err := zarr.OpenGroup(ctx, st, "v2_group.zarr")
	if err != nil {
		t.Fatal(err)
	}
	children, err := g.Children(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range children {
		names = append(names, c.Name+":"+string(c.Type))
	}
	if got := strings.Join(names, " "); got != "flags:array sub:group" {
		t.Errorf("children of v2_group: %q", got)
	}
}

// TestAbsurdChunkRefused opens an array whose chunks would each decode to
// 1 TiB: a clear ErrUnsupported, not an allocation that kills the process.
func TestAbsurdChunkRefused(t *testing.T) {
	ctx := context.Background()
	st := mem.New()
	doc := `{"zarr_format":3,"node_type":"array","shape":[1048576,1048576],"data_type":"float32",
"chunk_grid":{"name":"regular","configuration":{"chunk_shape":[524288,524288]}},
"chunk_key_encoding":{"name":"default"},"fill_value":0,"codecs":[{"name":"bytes","configuration":{"endian":"little"}}]}`
	if err := st.Set(ctx, "a/zarr.json", []byte(doc)); err != nil {
		t.Fatal(err)
	}
	if err := st.Set(ctx, "a/c/0/0", []byte("tiny")); err != nil {
		t.Fatal(err)
	}
	if _, err := zarr.OpenArray(ctx, st, "a"); !errors.Is(err, zarr.ErrUnsupported) {
		t.Fatalf("open: %v, want ErrUnsupported", err)
	}
}

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/mem"
	"github.com/gozarr/gozarr/zarr"
)

// TestLsTree checks ls and tree output on the corpus groups: every node
// once, with type, data type, shape, chunks and storage; --depth cuts the
// walk.
func TestLsTree(t *testing.T) {
	v3 := filepath.Join(refDir, "v3_group.zarr")
	v2 := filepath.Join(refDir, "v2_group.zarr")
	for _, c := range []struct {
		args []string
		want []string // lines, each a prefix of the output line at that place
	}{
		{[]string{"ls", v2}, []string{"/ (group, v2)", "/flags (array, v2) uint8 [22] chunks [7]", "/sub (group, v2)", "/sub/data (array, v2) float64 [11 × 10] chunks [4 × 5]"}},
		{[]string{"ls", "--depth", "1", v3}, []string{"/ (group, v3)", "/empty_group (group, v3)", "/mask (array, v3) bool [14 × 20] chunks [6 × 6]", "/measurements (group, v3)"}},
		{[]string{"tree", "--size", v3}, []string{
			v3 + " (group, v3)",
			"├── empty_group (group, v3)",
			"├── mask (array, v3) bool [14 × 20] chunks [6 × 6] bytes → gzip{\"level\":1} | stored 353 B, ratio 1.12×, 11/12 chunks (91.7%)",
			"└── measurements (group, v3)",
			"    ├── raw (group, v3)",
			"    │   └── samples (array, v3) uint8 [82] shards [32] of [8] sharding_indexed[bytes] | stored 292 B,",
			"    └── temperature (array, v3) float32 [8 × 17] chunks [4 × 8]",
		}},
	} {
		var out bytes.Buffer
		if err := run(context.Background(), c.args, &out, &out); err != nil {
			t.Fatalf("%v: %v", c.args, err)
		}
		lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
		if len(lines) != len(c.want) {
			t.Errorf("%v: %d lines, want %d:\n%s", c.args, len(lines), len(c.want), out.String())
			continue
		}
		for i, w := range c.want {
			if !strings.HasPrefix(lines[i], w) {
				t.Errorf("%v: line %d is %q, want it to start %q", c.args, i, lines[i], w)
			}
		}
	}
}

// TestInfoJSON: info --json --size is one JSON document with the fields
// info prints and the array's storage.
func TestInfoJSON(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), []string{"info", "--json", "--size", filepath.Join(refDir, "v3_shard_start.zarr")}, &out, &out); err != nil {
		t.Fatal(err)
	}
	var n nodeInfo
	if err := json.Unmarshal(out.Bytes(), &n); err != nil {
		t.Fatal(err)
	}
	if n.NodeType != "array" || n.DataType != "int32" || !equalInts(n.Shape, []int{47, 68}) || !equalInts(n.ChunkShape, []int{21, 20}) ||
		!equalInts(n.InnerChunkShape, []int{7, 5}) || n.Storage == nil || n.Storage.StoredUnits != 12 || n.Storage.Units != 12 || n.Storage.StoredBytes != 8963 {
		t.Fatalf("info --json: %s", out.String())
	}
	out.Reset()
	if err := run(context.Background(), []string{"info", "--json", filepath.Join(refDir, "v3_group.zarr")}, &out, &out); err != nil {
		t.Fatal(err)
	}
	n = nodeInfo{}
	if err := json.Unmarshal(out.Bytes(), &n); err != nil || n.NodeType != "group" || len(n.Children) != 3 || n.Children[1].Path != "mask" {
		t.Fatalf("info --json of a group: %v\n%s", err, out.String())
	}
}

// slowStore delays every request and records how many run at once.
type slowStore struct {
	store.Store
	in, peak     atomic.Int64
	gets, listed atomic.Int64
}

func (s *slowStore) enter() func() {
	n := s.in.Add(1)
	for {
		p := s.peak.Load()
		if n <= p || s.peak.CompareAndSwap(p, n) {
			break
		}
	}
	time.Sleep(2 * time.Millisecond)
	return func() { s.in.Add(-1) }
}

func (s *slowStore) Get(ctx context.Context, key string, r store.ByteRange) ([]byte, error) {
	s.gets.Add(1)
	defer s.enter()()
	return s.Store.Get(ctx, key, r)
}

func (s *slowStore) ListDir(ctx context.Context, dir string) ([]string, []string, error) {
	s.listed.Add(1)
	defer s.enter()()
	return s.Store.ListDir(ctx, dir)
}

// TestTreeConcurrent: the walk opens a group's children concurrently (it
// took one request's latency per node, in turn), and finds all of them.
func TestTreeConcurrent(t *testing.T) {
	ctx := context.Background()
	st := &slowStore{Store: mem.New()}
	if _, err := zarr.CreateGroup(ctx, st.Store, "", nil); err != nil {
		t.Fatal(err)
	}
	meta, err := zarr.NewArrayMetadata([]int{10}, dtype.TypeUint8, []int{5})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 100 {
		wg.Go(func() {
			if _, err := zarr.CreateArray(ctx, st.Store, "a"+strings.Repeat("x", i%3)+string(rune('0'+i/10))+string(rune('0'+i%10)), meta); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	n, err := newWalker(st, false, false).open(ctx, "", -1)
	if err != nil {
		t.Fatal(err)
	}
	if len(n.Children) != 100 {
		t.Fatalf("%d children, want 100", len(n.Children))
	}
	if p := st.peak.Load(); p < 8 {
		t.Fatalf("at most %d requests at once, want the children opened concurrently (≥ 8)", p)
	}
}

// TestTreeConsolidated: a group with consolidated metadata is walked from
// it: two requests for the root (array or group), none per child, no
// listing; and the nodes are the same as those a listing finds.
func TestTreeConsolidated(t *testing.T) {
	ctx := context.Background()
	ms := mem.New()
	if _, err := zarr.CreateGroup(ctx, ms, "", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := zarr.CreateGroup(ctx, ms, "sub", nil); err != nil {
		t.Fatal(err)
	}
	meta, err := zarr.NewArrayMetadata([]int{10}, dtype.TypeUint8, []int{5})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"a", "b", "sub/c", "sub/d"} {
		if _, err := zarr.CreateArray(ctx, ms, name, meta); err != nil {
			t.Fatal(err)
		}
	}
	listed, err := newWalker(ms, false, false).open(ctx, "", -1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := zarr.Consolidate(ctx, ms, ""); err != nil {
		t.Fatal(err)
	}
	st := &slowStore{Store: ms}
	n, err := newWalker(st, false, false).open(ctx, "", -1)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(listed)
	b, _ := json.Marshal(n)
	if string(a) != string(b) {
		t.Fatalf("from consolidated metadata:\n%s\nlisted:\n%s", b, a)
	}
	if g, l := st.gets.Load(), st.listed.Load(); g > 2 || l != 0 {
		t.Fatalf("%d gets and %d listings for a consolidated group; want at most 2 and none", g, l)
	}
}

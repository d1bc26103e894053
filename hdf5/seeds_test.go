package hdf5

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// TestWriteFuzzSeeds rewrites the checked-in seed corpora of the fuzz
// targets from the reference files (GOZARR_WRITE_SEEDS=1 go test -run
// TestWriteFuzzSeeds ./hdf5): whole tiny files for FuzzOpen, real object
// headers for FuzzObjectHeader, real chunk indexes (B-trees v1 and v2,
// fixed and extensible arrays) for FuzzIndex.
func TestWriteFuzzSeeds(t *testing.T) {
	if os.Getenv("GOZARR_WRITE_SEEDS") == "" {
		t.Skip("set GOZARR_WRITE_SEEDS=1 to rewrite testdata/fuzz")
	}
	write := func(target, name string, b []byte) {
		dir := filepath.Join("testdata", "fuzz", target)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		body := "go test fuzz v1\n[]byte(" + strconv.Quote(string(b)) + ")\n"
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	for _, name := range []string{"tiny_earliest.h5", "tiny_latest.h5"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		write("FuzzOpen", name, b)
	}
	for _, name := range []string{"tiny_earliest.h5", "tiny_latest.h5", "latest.h5"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		f := openTestFile(t, name)
		at := func(addr uint64) []byte { return b[addr:min(uint64(len(b)), addr+1024)] }
		seen := map[ChunkIndex]bool{}
		err = f.Walk(ctx, func(n *Node) error {
			if name != "latest.h5" {
				write("FuzzObjectHeader", fmt.Sprintf("%s-%d", name, n.Addr), at(n.Addr))
			}
			if ds := n.Dataset; ds != nil && ds.Layout == Chunked && !seen[ds.Index] && ds.lay.indexAddr != undef {
				seen[ds.Index] = true
				write("FuzzIndex", fmt.Sprintf("%s-%s", name, ds.Index), at(ds.lay.indexAddr))
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

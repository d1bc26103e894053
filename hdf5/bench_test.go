package hdf5

import (
	"context"
	"fmt"
	"github.com/gozarr/gozarr/internal/cputime"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/fs"
)

// bigFiles makes (once, in /tmp) two HDF5 files of n one-byte chunks with
// h5py in the reference chroot: libver latest (a paged fixed array index)
// and earliest (a version 1 B-tree). It skips when the chroot is absent.
func bigFiles(b *testing.B, n int) map[string]string {
	b.Helper()
	base := fmt.Sprintf("/tmp/gozarr-hdf5-bench-%d", n)
	files := map[string]string{"fixed-array": base + ".latest.h5", "btree-v1": base + ".earliest.h5"}
	if _, err := os.Stat(files["btree-v1"]); err == nil {
		return files
	}
	tool, _ := filepath.Abs("../../shared/tools/zarr-python")
	if _, err := os.Stat("/tmp/refenv/usr/bin/python3"); err != nil {
		b.Skip("no reference chroot at /tmp/refenv (see ../shared/tools/zarr-python-env.sh): cannot make the benchmark's HDF5 files")
	}
	cmd := exec.Command(tool, "testdata/gen.py", "big", fmt.Sprint(n), base)
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Skipf("gen.py big: %v\n%s", err, out)
	}
	return files
}

// BenchmarkVirtualize makes kerchunk references (JSON written to
// io.Discard) to a file of 10^5 chunks: open, walk, list every chunk,
// encode. The "readfile" case reads the whole file once with os.ReadFile:
// the floor to compare with (same run, same machine load).
func BenchmarkVirtualize(b *testing.B) {
	const n = 100_000
	files := bigFiles(b, n)
	ctx := context.Background()
	for _, name := range []string{"fixed-array", "btree-v1"} {
		path := files[name]
		info, err := os.Stat(path)
		if err != nil {
			b.Fatal(err)
		}
		st, err := fs.New(filepath.Dir(path), fs.ReadOnly())
		if err != nil {
			b.Fatal(err)
		}
		b.Run(name, func(b *testing.B) {
			b.SetBytes(info.Size())
			b.ReportAllocs()
			chunks := 0
			cpu0 := cpuTime()
			for b.Loop() {
				f, err := Open(ctx, st, filepath.Base(path))
				if err != nil {
					b.Fatal(err)
				}
				refs, err := References(ctx, f, RefsOptions{})
				if err != nil {
					b.Fatal(err)
				}
				if err := refs.WriteJSON(io.Discard); err != nil {
					b.Fatal(err)
				}
				chunks = len(refs.Refs) - 4
			}
			if chunks < n {
				b.Fatalf("%d chunks, want at least %d", chunks, n)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(chunks), "ns/chunk")
			// CPU time (user+system) per operation: on a loaded machine
			// the wall time says more about the other processes.
			b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N)/1e6, "cpu-ms/op")
		})
		// The same over a store that answers each request after 10 ms (an
		// object store's latency): requests and the wall time they cost.
		b.Run(name+"/latency-10ms", func(b *testing.B) {
			slow := &slowStore{Reader: st, delay: 10 * time.Millisecond}
			b.SetBytes(info.Size())
			b.ReportAllocs()
			for b.Loop() {
				f, err := Open(ctx, slow, filepath.Base(path))
				if err != nil {
					b.Fatal(err)
				}
				if _, err := References(ctx, f, RefsOptions{}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(slow.requests.Load())/float64(b.N), "requests/op")
		})
		b.Run(name+"/readfile", func(b *testing.B) {
			b.SetBytes(info.Size())
			b.ReportAllocs()
			cpu0 := cpuTime()
			for b.Loop() {
				if _, err := os.ReadFile(path); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N)/1e6, "cpu-ms/op")
		})
	}
}

// cpuTime returns the process's user and system CPU time in nanoseconds
// (0 where the platform cannot tell).
func cpuTime() int64 { return int64(cputime.Process()) }

// slowStore delays every Get, and counts them.
type slowStore struct {
	store.Reader
	delay    time.Duration
	requests atomic.Int64
}

func (s *slowStore) Get(ctx context.Context, key string, r store.ByteRange) ([]byte, error) {
	s.requests.Add(1)
	time.Sleep(s.delay)
	return s.Reader.Get(ctx, key, r)
}

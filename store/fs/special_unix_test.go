//go:build unix

package fs_test

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"

	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/fs"
	"github.com/gozarr/gozarr/store/storetest"
)

// readCalls are every read a key can go through.
func readCalls(s *fs.Store, key string) map[string]func(ctx context.Context) error {
	calls := map[string]func(ctx context.Context) error{
		"Get": func(ctx context.Context) error { _, err := s.Get(ctx, key, store.Full()); return err },
		"GetRange": func(ctx context.Context) error {
			_, err := s.Get(ctx, key, store.OffsetLen(0, 4))
			return err
		},
		"GetRanges": func(ctx context.Context) error {
			_, err := s.GetRanges(ctx, key, []store.ByteRange{store.OffsetLen(0, 4), store.Suffix(2)})
			return err
		},
		"ReadInto": func(ctx context.Context) error { _, err := s.ReadInto(ctx, key, 0, make([]byte, 4)); return err },
		"ReadIntoEmpty": func(ctx context.Context) error {
			_, err := s.ReadInto(ctx, key, 0, nil)
			return err
		},
		"Size": func(ctx context.Context) error { _, err := s.Size(ctx, key); return err },
	}
	if vr, ok := any(s).(store.VectorReader); ok {
		calls["ReadVec"] = func(ctx context.Context) error {
			_, err := vr.ReadVec(ctx, key, 0, [][]byte{make([]byte, 2), make([]byte, 2)})
			return err
		}
	}
	if m, ok := any(s).(store.Mapper); ok {
		calls["Map"] = func(ctx context.Context) error {
			_, unmap, err := m.Map(ctx, key)
			if err == nil {
				unmap()
			}
			return err
		}
	}
	return calls
}

// TestNonRegularFiles checks that FIFOs, sockets and devices under the root
// are refused with ErrNotRegular (not read as a missing key, which a Zarr
// reader turns into the fill value) and that no read blocks on them.
func TestNonRegularFiles(t *testing.T) { bothReadPaths(t, testNonRegularFiles) }

func testNonRegularFiles(t *testing.T) {
	ctx := context.Background()
	for _, follow := range []bool{false, true} {
		var opts []fs.Option
		if follow {
			opts = append(opts, fs.FollowSymlinks())
		}
		s, root := newStore(t, opts...)
		if err := s.Set(ctx, "c/1", []byte("value")); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Mkfifo(filepath.Join(root, "zarr.json"), 0o666); err != nil {
			t.Skipf("no FIFOs here: %v", err)
		}
		if err := syscall.Mkfifo(filepath.Join(root, "c", "0"), 0o666); err != nil {
			t.Fatal(err)
		}
		keys := []string{"zarr.json", "c/0"}
		// A socket: its path must be short, so listen from inside root.
		wd, _ := os.Getwd()
		if err := os.Chdir(root); err == nil {
			l, err := net.Listen("unix", "sock")
			os.Chdir(wd)
			if err == nil {
				t.Cleanup(func() { l.Close() })
				keys = append(keys, "sock")
			} else {
				t.Logf("no unix socket: %v", err)
			}
		}
		if follow {
			// A device reached through a link: /dev/null reads as empty
			// and /dev/zero as endless zeros if the store opens it.
			for i, dev := range []string{"/dev/null", "/dev/zero"} {
				k := []string{"null", "zero"}[i]
				if err := os.Symlink(dev, filepath.Join(root, k)); err == nil {
					keys = append(keys, k)
				}
			}
		}
		for _, key := range keys {
			for name, call := range readCalls(s, key) {
				err := storetest.NoHang(t, name+"("+key+")", func() error { return call(ctx) })
				if !errors.Is(err, fs.ErrNotRegular) || errors.Is(err, store.ErrNotFound) {
					t.Errorf("follow=%v: %s(%q) = %v; want ErrNotRegular", follow, name, key, err)
				}
				var ke *store.KeyError
				if !errors.As(err, &ke) || ke.Key != key {
					t.Errorf("follow=%v: %s(%q): %v does not name the key", follow, name, key, err)
				}
			}
		}
		// Listing shows only values, and the regular value still reads.
		keysIn, dirs, err := s.ListDir(ctx, "c/")
		if err != nil || !slices.Equal(keysIn, []string{"1"}) || len(dirs) != 0 {
			t.Errorf("follow=%v: ListDir(c/) = %q %q, %v; want [1]", follow, keysIn, dirs, err)
		}
		all := storetest.ListKeys(t, s, "")
		if !slices.Equal(all, []string{"c/1"}) {
			t.Errorf("follow=%v: List = %q, want [c/1]", follow, all)
		}
		// Set replaces a FIFO with a value, Delete removes one.
		if err := storetest.NoHang(t, "Set(c/0)", func() error { return s.Set(ctx, "c/0", []byte("now a value")) }); err != nil {
			t.Errorf("follow=%v: Set over a FIFO: %v", follow, err)
		}
		if b, err := s.Get(ctx, "c/0", store.Full()); err != nil || string(b) != "now a value" {
			t.Errorf("follow=%v: Get(c/0) after Set = %q, %v", follow, b, err)
		}
		if err := storetest.NoHang(t, "Delete(zarr.json)", func() error { return s.Delete(ctx, "zarr.json") }); err != nil {
			t.Errorf("follow=%v: Delete of a FIFO: %v", follow, err)
		}
		if _, err := os.Lstat(filepath.Join(root, "zarr.json")); !os.IsNotExist(err) {
			t.Errorf("follow=%v: FIFO still there after Delete: %v", follow, err)
		}
	}
}

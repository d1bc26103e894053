package fs_test

import (
	"context"
	"os"
	"runtime"
	"testing"

	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/fs"
)

// TestClose checks that Close releases the descriptors a confined store
// holds, and that a closed store fails its calls instead of panicking.
func TestClose(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	count := func() int {
		des, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Skipf("cannot count descriptors: %v", err)
		}
		return len(des)
	}
	if runtime.GOOS != "linux" {
		t.Skip("counts descriptors in /proc/self/fd")
	}
	before := count()
	for range 100 {
		s, err := fs.New(root)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Set(ctx, "k", []byte("v")); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Get(ctx, "k", store.Full()); err == nil {
			t.Fatal("Get on a closed store succeeded")
		}
	}
	if after := count(); after > before+2 {
		t.Errorf("%d descriptors before 100 stores opened and closed, %d after", before, after)
	}
}
